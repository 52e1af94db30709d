"""The training configuration: one dataclass whose fields carry their help text.

Loaded from YAML (``--config``), then overridden by CLI flags (``--max-steps 5``, ``--model
tiny``, any field as ``--field-name``) and ``ARENAGYM_<GAME>_URL`` variables; validated before
any model loads, with messages that say what to change. Games are whatever is registered:
their declarations supply the default mode, rewards and weights.

One game (``game: <name>``) or several in one run (``games: [<name>, <name>]``): then
``reset``, ``rewards``, ``mode`` and ``urls`` are keyed by game, and each dataset row names
its game, so every rollout plays its own.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import yaml

Backend = Literal["transformers", "vllm-colocate", "vllm-server"]
Logger = Literal["none", "tensorboard", "trackio", "wandb"]

Transport = Literal["websocket", "http", "inprocess"]
MODES = ("tools", "answer")


def _help(text: str, default: Any = dataclasses.MISSING, **kw: Any) -> Any:
    if default is not dataclasses.MISSING:
        kw["default"] = default
    return field(metadata={"help": text}, **kw)


@dataclass
class TrainConfig:
    # what to train
    game: str | None = _help(
        "Game to train on: any registered game (`arenagym serve --list`).", None
    )
    games: list[str] = _help(
        "Several games in one run, e.g. [game-a, game-b]: rows alternate between them, and "
        "reset / rewards / mode / urls are then keyed by game.",
        default_factory=list,
    )
    model: str = _help(
        "Hub id or local path of the policy; 'tiny' builds a tiny model offline.", "tiny"
    )
    output_dir: str = _help(
        "Checkpoints, metrics.jsonl and the final model go here.", "outputs/run"
    )
    seed: int = _help("Seed of the run: the episodes and the trainer's randomness.", 0)
    episodes: int = _help("Training episodes (dataset rows), each one seed of a game.", 300)
    reset: dict[str, Any] = _help(
        "Game reset fields for every episode, e.g. {n_numbers: 3, max_num: 9} or {hard_mode: true}.",
        default_factory=dict,
    )
    mode: str | dict[str, str] | None = _help(
        "tools (multi-turn, through the game's tools) or answer (one text reply the server "
        "verifies); default: the game's own (the first of its declared modes).",
        None,
    )
    prompt: str | None = _help(
        "Instruction before the game's text in tools mode; the game's own if empty.", None
    )

    # game servers
    url: str | None = _help(
        "The game's server URL (else ARENAGYM_<GAME>_URL, else a local server); --<game>-url "
        "sets one game's in a mixed run.",
        None,
    )
    urls: dict[str, str] = _help("Server URL per game (mixed runs).", default_factory=dict)
    transport: Transport = _help(
        "How the trainer talks to the game servers; inprocess runs the games in this process.",
        "websocket",
    )
    verify_connections: int = _help(
        "Answer mode, one game: server sessions that judge a batch's replies in parallel.", 8
    )
    server_reward: bool = _help(
        "Train on the game server's own reward (TRL's get_reward) instead of the game's shaped "
        "rewards; the solve rate is still logged.",
        False,
    )

    # fine-tuning
    lora: bool = _help("Train a LoRA adapter (true) or all weights (false).", True)
    lora_r: int = _help("LoRA rank.", 16)
    lora_alpha: int = _help("LoRA alpha.", 32)
    lora_dropout: float = _help("LoRA dropout.", 0.05)
    lora_target_modules: list[str] | str = _help(
        "Modules LoRA adapts, or 'all-linear'.", "all-linear"
    )

    # GRPO
    num_generations: int = _help("Completions per prompt (the GRPO group).", 8)
    per_device_train_batch_size: int = _help(
        "Completions per device per step (a multiple of num_generations).", 8
    )
    gradient_accumulation_steps: int = _help("Micro-batches per optimiser step.", 1)
    learning_rate: float = _help("Peak learning rate.", 1e-5)
    beta: float = _help("KL coefficient against the reference model (0 disables it).", 0.005)
    loss_type: str = _help("TRL's GRPO loss: grpo, dapo, dr_grpo, bnpo…", "dapo")
    max_completion_length: int = _help(
        "Token budget of a completion (the whole multi-turn episode).", 320
    )
    temperature: float = _help("Sampling temperature of rollouts.", 1.0)
    num_train_epochs: float = _help("Passes over the episodes.", 1.0)
    max_steps: int = _help("Stop after this many optimiser steps (-1: as the epochs say).", -1)
    num_iterations: int = _help(
        "Optimiser steps on each batch of rollouts (TRL's mu): more learning per generation.", 1
    )
    max_time_s: float | None = _help(
        "Stop after this many seconds of training (the final model is saved as usual).", None
    )
    warmup_steps: int = _help("Steps of linear learning-rate warm-up.", 0)
    enable_thinking: bool = _help("Let Qwen3-style templates think before answering.", False)
    rewards: dict[str, Any] = _help(
        "Reward functions and weights, e.g. {correct: 3.0, greens: 1.0}; default: the game's "
        "own (its published recipe).",
        default_factory=dict,
    )

    # generation backend
    backend: Backend = _help(
        "transformers, vllm-colocate (one GPU) or vllm-server (its own GPU).", "transformers"
    )
    vllm_gpu_memory_utilization: float = _help("GPU memory share of vLLM in colocate mode.", 0.3)
    vllm_server_host: str = _help("Host of `trl vllm-serve` in vllm-server mode.", "127.0.0.1")
    vllm_server_port: int = _help("Port of `trl vllm-serve` in vllm-server mode.", 8000)
    vllm_launch: bool = _help(
        "In vllm-server mode, start `trl vllm-serve` here instead of connecting.", False
    )
    vllm_launch_gpus: str = _help("CUDA_VISIBLE_DEVICES of a launched vLLM server.", "1")
    vllm_max_model_len: int = _help("Context length vLLM reserves (prompt + completion).", 4096)

    # bookkeeping
    logging: Logger = _help("Where metrics go besides metrics.jsonl.", "none")
    logging_steps: int = _help("Log every N steps.", 1)
    save_steps: int = _help("Write a checkpoint every N steps.", 50)
    save_total_limit: int | None = _help("Keep at most N checkpoints (None: all).", 3)
    resume: bool = _help("Resume from the last complete checkpoint in output_dir, if any.", True)
    push_to_hub: bool = _help("Push the final model to the Hub (needs HF_TOKEN).", False)
    hub_model_id: str | None = _help("Hub repository for push_to_hub.", None)
    use_cpu: bool = _help("Train on the CPU even if a GPU is present.", False)
    bf16: bool | None = _help("bfloat16 training (default: on when a GPU supports it).", None)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Fail before any model loads, saying what to change."""
        from env_servers.core.registry import UnknownGame, game_names, load_spec

        problems = _type_problems(self)
        if problems:  # the checks below compare values, which need the right types
            raise ValueError("Invalid training config: " + "; ".join(problems) + ".")
        for name, kind in (("backend", Backend), ("logging", Logger), ("transport", Transport)):
            if getattr(self, name) not in get_args(kind):
                problems.append(
                    f"{name} must be one of {', '.join(get_args(kind))}, not {getattr(self, name)!r}"
                )
        known = game_names()
        if not self.game_list:
            problems.append(f"name a game: game: <one of {', '.join(known)}> (or games: [...])")
        for game in self.game_list:
            if game not in known and not _family_game(game):
                close = difflib.get_close_matches(game, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                problems.append(f"game must be one of {', '.join(known)}, not {game!r}{hint}")
        if len(set(self.game_list)) != len(self.game_list):
            problems.append(f"games are listed twice: {self.games}")
        if self.mixed:
            for name in ("reset", "rewards", "urls"):
                stray = set(getattr(self, name)) - set(self.game_list)
                if stray:
                    problems.append(
                        f"in a mixed run {name} is keyed by game ({', '.join(self.game_list)}), "
                        f"not {', '.join(sorted(stray))}"
                    )
            if self.mode is not None and not isinstance(self.mode, dict):
                problems.append("in a mixed run mode is keyed by game, e.g. {<game>: tools}")
        if not problems:
            for game in self.game_list:
                try:
                    spec = load_spec(game)
                except UnknownGame as error:
                    problems.append(str(error))
                    continue
                mode = self.mode_for(game)
                if mode not in spec.modes:
                    problems.append(
                        f"{game} is played in mode {' or '.join(spec.modes)}, not {mode!r}"
                    )
                unknown = set(self.rewards_for(game)) - set(spec.rewards)
                if unknown:
                    problems.append(
                        f"unknown reward(s) for {game}: {', '.join(sorted(unknown))}; "
                        f"known: {', '.join(spec.rewards)}"
                    )
                reset = self.reset_for(game)
                stray = set(reset) - spec.reset_fields
                if stray:
                    problems.append(
                        f"unknown reset field(s) for {game}: {', '.join(sorted(stray))}; "
                        f"known: {', '.join(sorted(spec.reset_fields))}"
                    )
        if self.episodes < len(self.game_list):
            problems.append("episodes must be at least 1 per game")
        if self.num_generations < 2:
            problems.append(
                "num_generations must be at least 2: GRPO compares completions within a group"
            )
        elif self.per_device_train_batch_size % self.num_generations:
            problems.append(
                f"per_device_train_batch_size ({self.per_device_train_batch_size}) must be a multiple "
                f"of num_generations ({self.num_generations})"
            )
        if self.max_completion_length < 8:
            problems.append("max_completion_length must be at least 8 tokens")
        if self.learning_rate <= 0:
            problems.append("learning_rate must be positive")
        if self.beta < 0:
            problems.append("beta must not be negative")
        if self.verify_connections < 1:
            problems.append("verify_connections must be at least 1")
        if self.num_iterations < 1:
            problems.append("num_iterations must be at least 1")
        if self.max_time_s is not None and self.max_time_s <= 0:
            problems.append("max_time_s must be positive (or null: no limit)")
        if self.backend.startswith("vllm") and (self.use_cpu or self.model == "tiny"):
            problems.append(
                f"backend {self.backend} needs a GPU and a real model: use backend: transformers"
            )
        if self.vllm_launch and self.backend != "vllm-server":
            problems.append("vllm_launch only applies to backend: vllm-server")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            problems.append("vllm_gpu_memory_utilization must be in (0, 1]")
        if self.push_to_hub and not self.hub_model_id:
            problems.append("push_to_hub needs hub_model_id (e.g. you/my-game-grpo)")
        if problems:
            raise ValueError("Invalid training config: " + "; ".join(problems) + ".")

    # -- per game -------------------------------------------------------------------------------

    @property
    def game_list(self) -> list[str]:
        """The games of the run, in row order."""
        return list(self.games) or ([self.game] if self.game else [])

    @property
    def mixed(self) -> bool:
        return len(self.game_list) > 1

    def _for(self, name: str, game: str) -> Any:
        value = getattr(self, name)
        return value.get(game, {}) if self.mixed else value

    def reset_for(self, game: str) -> dict[str, Any]:
        return dict(self._for("reset", game))

    def mode_for(self, game: str) -> str:
        """The game's mode in this run: the config's, else the game's default."""
        from env_servers.core.registry import load_spec

        mode = self.mode.get(game) if isinstance(self.mode, dict) else self.mode
        return mode or load_spec(game).default_mode

    def rewards_for(self, game: str) -> dict[str, float]:
        return dict(self._for("rewards", game))

    def reward_weights(self, game: str) -> dict[str, float]:
        """The configured rewards and weights, else the game's own."""
        from env_servers.core.registry import load_spec

        return self.rewards_for(game) or load_spec(game).default_weights

    def server_url(self, game: str) -> str | None:
        """The game's server: the config, else ``ARENAGYM_<GAME>_URL``, else none (start one)."""
        from env_servers.core.registry import load_spec

        url = self.urls.get(game) or (None if self.mixed else self.url)
        return url or os.environ.get(load_spec(game).url_variable) or None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}
GROUPS = {
    "game": "What to train",
    "url": "Game servers",
    "lora": "Fine-tuning",
    "num_generations": "GRPO",
    "backend": "Generation backend",
    "logging": "Logging and checkpoints",
}
"""The first field of each group of ``arenagym train --help``, in field order."""
_SCALARS: dict[Any, tuple[type, ...]] = {
    int: (int,),
    float: (int, float),
    bool: (bool,),
    str: (str,),
    dict: (dict,),
    list: (list,),
}
_KIND_NAMES = {
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    str: "text",
    dict: "a mapping",
    list: "a list",
}


def _kinds(hint: Any) -> list[Any]:
    """The runtime types a field's annotation admits (``int | None`` → int, NoneType)."""
    origin = get_origin(hint)
    if origin in (Union, UnionType):
        return [kind for arg in get_args(hint) for kind in _kinds(arg)]
    if origin is Literal:
        return [str]  # the choices themselves are checked by validate()
    return [origin or hint]


def _type_problems(config: TrainConfig) -> list[str]:
    """A value of the wrong type for its field, said plainly (``learning_rate: fast``)."""
    hints = get_type_hints(TrainConfig)
    problems = []
    for name in FIELDS:
        value, kinds = getattr(config, name), _kinds(hints[name])
        if value is None and type(None) in kinds:
            continue
        allowed = tuple(t for kind in kinds for t in _SCALARS.get(kind, ()))
        if isinstance(value, allowed) and (bool in allowed or not isinstance(value, bool)):
            continue
        wanted = " or ".join(
            dict.fromkeys(
                _KIND_NAMES.get(kind, kind.__name__) for kind in kinds if kind is not type(None)
            )
        )
        problems.append(f"{name} must be {wanted}, not {value!r}")
    return problems


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 floats: ``2e-6`` is a number, as it is to anyone
    writing a learning rate (YAML 1.1 reads it as text and wants ``2.0e-6``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def load_yaml(text: str) -> Any:
    """A config file's or a ``--field value``'s YAML, safely, with YAML 1.2 floats."""
    return yaml.load(text, Loader=_Loader)


def load_config(path: str | Path | None = None, **overrides: Any) -> TrainConfig:
    """A config from YAML (optional) with ``overrides`` (field → value, ``None`` = unset);
    ``<game>_url`` (``--<game>-url``) sets that game's server."""
    values: dict[str, Any] = {}
    if path is not None:
        text = Path(path).read_text()
        loaded = load_yaml(text) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} must hold a mapping of config fields.")
        values.update(loaded)
    values.update({k: v for k, v in overrides.items() if v is not None})
    for name in [name for name in values if name not in FIELDS and _game_url(name)]:
        values["urls"] = {**values.get("urls", {}), _game_url(name): values.pop(name)}
    if values.get("urls") and not values.get("games") and values.get("game"):
        values["url"] = values.get("url") or values["urls"].pop(values["game"], None)
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(
            f"Unknown config field(s): {', '.join(sorted(unknown))}. "
            "See `arenagym train --help` for the fields."
        )
    return TrainConfig(**values)


def _game_url(name: str) -> str | None:
    """``<game>_url`` → ``<game>`` when that game is registered; the dashes of a game's name
    may come as underscores (``--family:game-v0-url`` arrives as ``family:game_v0_url``)."""
    from env_servers.core.registry import game_names

    if not name.endswith("_url"):
        return None
    game = name.removesuffix("_url")
    if _family_game(game):
        return game
    return {known.replace("-", "_"): known for known in game_names()}.get(game.replace("-", "_"))


def _family_game(game: str) -> bool:
    """Whether ``game`` is a member of a registered family that it can make (listed or not)."""
    from env_servers.core.family import split_name
    from env_servers.core.registry import UnknownGame, load_spec, registered_families

    parts = split_name(game)
    if parts is None or parts[0] not in registered_families():
        return False
    try:
        load_spec(game)
    except UnknownGame:
        return False
    return True


def parse_override(name: str, text: str) -> Any:
    """A ``--field value`` from the command line, typed by YAML (``3``, ``true``, ``[a, b]``)."""
    if name not in FIELDS and not _game_url(name):
        close = difflib.get_close_matches(name, list(FIELDS), n=1)
        hint = f" Did you mean --{close[0].replace('_', '-')}?" if close else ""
        raise ValueError(f"Unknown config field '{name}'.{hint} See `arenagym train --help`.")
    value = load_yaml(text)
    return text if value is None and text not in ("null", "~", "") else value
