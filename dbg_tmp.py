import sys
sys.path.insert(0, "tests")
from test_noise import *
for name in IRREGULAR:
    events, profile, raises = scenario(name)
    for seed in range(2):
        try:
            Played(events, kinds=["fast_pair"], seed=seed, mouth=True, profile=profile)
        except AttributeError:
            model = NoiseModel(only=["fast_pair"], rates={"fast_pair": 1.0})
            rng = random.Random(seed)
            hand = act_out(events, model, rng)
            stream = poll_stream(hand, model, rng)
            evs = presence_events(hand, stream, lambda: PresenceTracker(mouth_window=0.15, max_tags=6), mouth=True)
            un = [e.t for e in evs if e.unread]
            print(name, seed, un)
            for t, r, seen in stream:
                if r != "board" and un[0] - 0.4 < t < un[0] and (r == "mouth" or seen.get("shoe")): print("  ", t, r, seen)
            for p in hand.passes:
                if p.zone == "shoe" and un[0] - 0.4 < p.t_on < un[0]: print("  pass", p)
            break
events, profile, raises = scenario("extra_card_returned_is_first_burn")
model = NoiseModel(only=["fast_pair"], rates={"fast_pair": 1.0})
rng = random.Random(1)
hand = act_out(events, model, rng)
stream = poll_stream(hand, model, rng)
tr = PresenceTracker(mouth_window=0.15)
for t, r, seen in stream:
    if r == "mouth": tr.count(t); print("count", t, tr._counts); continue
    if r == "shoe":
        ev = tr.update(t, seen)
        if 8.9 < t < 9.2: print(t, seen, [(e.uid, e.unread) for e in ev], tr._counts, tr._rereads)
