"""Countdown's evaluation view: each puzzle's numbers and target beside every model's answer
(``✓``/``✗``, the expression, its value, and why it failed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainer.views import EpisodeColumn, EvaluationView, Record, cell

if TYPE_CHECKING:
    from env_servers.core.spec import GameSpec
    from env_servers.countdown.agent import CountdownToolEnv


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


class CountdownView(EvaluationView):
    episode_columns = (
        EpisodeColumn("Numbers", lambda r: ", ".join(map(str, r["details"]["numbers"]))),
        EpisodeColumn("Target", lambda r: str(r["details"]["target"]), "---:"),
    )
    transcripts = 0

    def details(self, agent: CountdownToolEnv, state: Any) -> dict[str, Any]:
        """The puzzle and the server's verdict on the (last) answer."""
        return {
            "numbers": list(agent.numbers),
            "target": agent.target,
            "expression": agent.expression,
            "value": agent.value,
            "reason": agent.reason,
        }

    def answer(self, record: Record, spec: GameSpec) -> str:
        details = record["details"]
        mark = "✓" if record["solved"] else "✗"
        if details["expression"] is None:
            return cell(f"{mark} {details['reason'] or 'no answer'}")
        text = f"`{details['expression']}` → {_number(details['value'])} {mark}"
        if not record["solved"] and details["reason"] and details["value"] is not None:
            text += f" ({details['reason']})"
        return cell(text)


VIEW = CountdownView()
