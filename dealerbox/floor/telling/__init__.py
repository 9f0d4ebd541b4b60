"""Telling: what the room's people read, recounted from the stored lines.

- :mod:`.hands` follows a table's lines hand by hand; :mod:`.figures` keeps the pit
  boss's figures (the ledger) and :mod:`.figure_text` words them;
- :mod:`.story` and :mod:`.story_pdf`: a hand's story, as a page and a PDF;
- :mod:`.report` and :mod:`.report_pdf`: the shift report's HTML, CSV and PDF;
- :mod:`.floor_words` the floor map and its alerts in the floor's language;
  :mod:`.table_view` one table's tile as every view sends it;
- :mod:`.deck_names` which card a tag is; :mod:`.clock` local times, zones and shifts.
"""
