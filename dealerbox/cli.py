"""The ``dealerbox`` command."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .errors import DealerboxError, EventError

DEMO_SESSION = Path(__file__).resolve().parent.parent / "hardware_sim" / "demo_session.jsonl"
_GLYPH_TEXT = {"\x00": "\u2663", "\x01": "\u2666", "\x02": "\u2665", "\x03": "\u2660"}
_LED_TEXT = {"green": "\033[32m", "amber": "\033[33m", "red": "\033[31m"}


def _engine(args):
    from .engine import HandEngine
    from .profiles import load_profile
    from .registry import DeckRegistry

    registry = DeckRegistry.load(args.registry) if getattr(args, "registry", None) else None
    return HandEngine(load_profile(args.profile), registry)


def cmd_replay(args) -> int:
    from .engine import decision_to_dict
    from .events import read_events
    from .messages import load_messages

    messages = load_messages(args.lang)
    engine = _engine(args)
    out = sys.stdout
    try:
        with open(args.events, encoding="utf-8") as fh:
            for event in read_events(fh):
                for d in engine.feed(event):
                    out.write(json.dumps(decision_to_dict(d, messages), ensure_ascii=False) + "\n")
    except EventError as exc:
        out.flush()
        print(f"dealerbox replay: {args.events}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dealerbox replay: {exc}", file=sys.stderr)
        return 2
    return 0


def glass_text(lines) -> list[str]:
    """LCD lines with the suit glyph slots shown as suit symbols, for a terminal."""
    return ["".join(_GLYPH_TEXT.get(ch, ch) for ch in line) for line in lines]


def show_panel(view, *, color: bool, out=sys.stdout) -> None:
    led = view.led.upper() + (" (blinking)" if view.blink else "")
    if color:
        led = f"{_LED_TEXT[view.led]}\u25cf\033[0m {led}"
    cols = len(view.lines[0])
    out.write("+" + "-" * cols + "+  LED: " + led + (" *beep*" if view.beep else "") + "\n")
    for line in glass_text(view.lines):
        out.write("|" + line + "|\n")
    out.write("+" + "-" * cols + "+\n")


def cmd_demo(args) -> int:
    """Replay the bundled demo session and show each decision as the panel would."""
    from .events import read_events
    from .messages import load_messages
    from .panel import render

    messages = load_messages(args.lang)
    engine = _engine(args)
    color = sys.stdout.isatty()
    previous = None
    with open(args.events or DEMO_SESSION, encoding="utf-8") as fh:
        events = list(read_events(fh))
    hands = 0
    for event in events:
        if event.ev == "new_hand":
            hands += 1
            print(f"\n=== hand {hands}: {event.players} players, {event.hole_cards} hole cards ===")
        decisions = engine.feed(event)
        if event.ev == "button" and event.name == "hand_over" and not decisions:
            print(f"t={event.t:7.2f}  hand over; the panel shows {engine.decision.verdict.upper()}")
        for d in decisions:
            print(f"t={d.t:7.2f}  {event.ev} {event.card or event.name or ''}".rstrip())
            show_panel(render(d, messages, previous=previous), color=color)
            if d.steps:
                for i, s in enumerate(d.steps):
                    mark = "->" if i == d.step else "  "
                    print(f"   {mark} {i + 1}. {messages.text(s)}")
            if d.rule:
                print(f"   rule: {d.rule}")
            previous = d
            if args.delay:
                time.sleep(args.delay)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dealerbox", description="The controller of an RFID poker table.")
    sub = p.add_subparsers(dest="command", required=True)

    def engine_opts(sp):
        sp.add_argument("--profile", default="tda-2019", help="rule profile name or file (default tda-2019)")
        sp.add_argument("--lang", default="en", choices=["en", "cs", "de", "sk"], help="display language")
        sp.add_argument("--registry", help="deck registry file (default: the built-in simulation registry)")

    sp = sub.add_parser("replay", help="replay a CONTRACT.md event file; decisions as JSON Lines on stdout")
    sp.add_argument("events")
    engine_opts(sp)
    sp.set_defaults(func=cmd_replay)

    sp = sub.add_parser("demo", help="replay the bundled demo session, shown as the panel would show it")
    sp.add_argument("events", nargs="?", help="another event file to show")
    sp.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each decision")
    engine_opts(sp)
    sp.set_defaults(func=cmd_demo)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except DealerboxError as exc:
        print(f"dealerbox: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (head, less) went away: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
