import random, json
from pathlib import Path
from hardware_sim.noise import NoiseModel, act_out, poll_stream, presence_events, KINDS
from hardware_sim.script import HandScript
from dealerbox.hw.presence import PresenceTracker
from dealerbox.rules.engine import HandEngine
FORCE = {"clock_jitter": 0.05, "board_dropout": 0.3}
def clean(seed):
    s = HandScript(seed=seed); s.new_hand(6).deal(); s.emit("button", dt=3, name="round_done")
    s.flop(spread=seed % 2 == 0); s.emit("button", dt=3, name="round_done"); s.turn(); s.emit("button", dt=3, name="round_done")
    s.river(); s.emit("button", dt=3, name="round_done"); s.emit("button", dt=2, name="hand_over"); return s.events
def raised(events, kind, seed, mouth, profile="tda-2019"):
    model = NoiseModel(only=[kind], rates={kind: FORCE.get(kind, 1.0)})
    rng = random.Random(seed)
    hand = act_out(events, model, rng)
    out = presence_events(hand, poll_stream(hand, model, rng), lambda: PresenceTracker(mouth_window=0.15 if mouth else None, max_tags=6), mouth=mouth)
    eng = HandEngine(profile); r = []
    for e in out:
        try: ds = eng.feed(e)
        except Exception: r.append("EXC"); continue
        r += [d.irregularity for d in ds if d.irregularity and d.irregularity not in r]
    return r
for kind in KINDS:
    res = {m: [tuple(raised(clean(s), kind, s, m)) for s in range(6)] for m in (False, True)}
    print(kind, {m: sorted(set(v)) for m, v in res.items()})
