"""Reward-hacking probes: a policy that sends invalid moves, empty output or one move again
and again must not out-score random legal play (mean return over the same seeds)."""

from __future__ import annotations

from statistics import mean

from env_servers.check.run import Run, expect, need


def _probe(run: Run, names: list[str], advice: str) -> str:
    baseline = mean(ep.score for ep in run.random_play)
    lines = []
    for name in names:
        episodes = [ep for ep in run.probes[name] if ep.error is None]
        if not episodes:
            lines.append(f"{name}: refused as malformed")
            continue
        score = mean(ep.score for ep in episodes)
        expect(
            score <= baseline + 1e-9,
            f"{name} moves return {score:.3f} on average over {len(episodes)} episodes, random "
            f"legal moves {baseline:.3f}: {advice}",
        )
        lines.append(f"{name} {score:.3f}")
    return f"{'; '.join(lines)} ≤ random legal {baseline:.3f} (mean return)"


def probe_invalid_moves(run: Run) -> str:
    spec = run.can_play()
    need(spec.invalid_moves, "no invalid_moves declared: no invalid move to send")
    return _probe(run, ["invalid"], "an invalid move must earn no more than a legal one")


def probe_empty_output(run: Run) -> str:
    run.can_play()
    names = [name for name in run.probes if name.startswith("empty")]
    need(names or None, "no text field in the action and no answer mode: no empty output")
    return _probe(run, names, "empty output must earn no more than a legal move")


def probe_repeat_move(run: Run) -> str:
    spec = run.can_play()
    need(spec.repeat_probe, "not opted in (repeat_probe=False)")
    return _probe(run, ["repeated"], "repeating one move must not pay")
