"""The terminal view: the floor map and its alerts in a terminal (:mod:`.view`, Textual),
read from the web view's API like any browser."""
