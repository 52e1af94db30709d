"""GRPO training against game servers with TRL, for any registered game or mix of games.

A game in tools mode trains multi-turn through its agent's tools (``environment_factory``); a
game in answer mode trains as the published single-answer recipe does, one text answer per
episode, verified by the game server. A mixed run hands TRL one factory per game, and each
row names its game.
Checkpoints are complete only once their ``trainer_state.json`` (written last) parses; a run
started again in the same output directory resumes from the last complete one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

from trainer.checkpoints import last_complete_checkpoint
from trainer.config import TrainConfig
from trainer.progress import MetricsFile, RichProgress

logger = logging.getLogger("arenagym.train")


def grpo_args(config: TrainConfig) -> Any:
    """TRL's ``GRPOConfig`` for this run."""
    from trl import GRPOConfig

    backend: dict[str, Any] = {"use_vllm": config.backend != "transformers"}
    if config.backend == "vllm-colocate":
        backend |= {
            "vllm_mode": "colocate",
            "vllm_gpu_memory_utilization": config.vllm_gpu_memory_utilization,
        }
    elif config.backend == "vllm-server":
        backend |= {
            "vllm_mode": "server",
            "vllm_server_host": config.vllm_server_host,
            "vllm_server_port": config.vllm_server_port,
        }
    return GRPOConfig(
        output_dir=config.output_dir,
        seed=config.seed,
        num_generations=config.num_generations,
        per_device_train_batch_size=config.per_device_train_batch_size,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        learning_rate=config.learning_rate,
        beta=config.beta,
        loss_type=config.loss_type,
        max_completion_length=config.max_completion_length,
        temperature=config.temperature,
        num_iterations=config.num_iterations,
        num_train_epochs=config.num_train_epochs,
        max_steps=config.max_steps,
        warmup_steps=config.warmup_steps,
        logging_steps=config.logging_steps,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=config.save_total_limit,
        report_to=[] if config.logging == "none" else [config.logging],
        push_to_hub=config.push_to_hub,
        hub_model_id=config.hub_model_id,
        use_cpu=config.use_cpu,
        bf16=config.bf16 if config.bf16 is not None else _bf16_supported(config),
        disable_tqdm=True,
        chat_template_kwargs={"enable_thinking": config.enable_thinking},
        **backend,
    )


def _bf16_supported(config: TrainConfig) -> bool:
    import torch

    return not config.use_cpu and torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def peft_config(config: TrainConfig) -> Any:
    if not config.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=config.lora_target_modules,
        task_type="CAUSAL_LM",
    )


def model_path(config: TrainConfig) -> str:
    from trainer.tiny import TINY_MODEL, tiny_model_path

    return str(tiny_model_path()) if config.model == TINY_MODEL else config.model


def train(config: TrainConfig) -> Path:
    """Train, checkpointing as configured, and save the final model in ``output_dir``."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    warnings.filterwarnings("ignore", category=FutureWarning, module="transformers")
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from transformers.utils import logging as transformers_logging
    from trl import GRPOTrainer

    from clients.local_server import local_server
    from clients.trl import make_env_factory
    from env_servers.core.registry import load_spec
    from trainer import data
    from trainer.model_card import write_model_card
    from trainer.rewards import AnswerJudge, reward_functions
    from trainer.timelimit import TimeLimit

    transformers_logging.disable_progress_bar()  # weights loaded and shards saved: our bar says it
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "train_config.json").write_text(json.dumps(config.to_dict(), indent=2))
    games = config.game_list
    with contextlib.ExitStack() as stack:
        factories = {}
        for game in games:
            url = None
            if config.transport != "inprocess":
                url = config.server_url(game) or stack.enter_context(local_server(game)).url
            factories[game] = make_env_factory(
                game,
                url=url,
                transport=config.transport,
                mode=config.mode_for(game),  # type: ignore[arg-type]
                server_reward=config.server_reward,
                **config.reset_for(game),
            )
        if config.vllm_launch:
            from trainer.vllm import launched_server

            stack.enter_context(launched_server(config, model_path(config)))
        counts = data.split_episodes(config.episodes, games)
        rows = {
            game: data.game_rows(factory(), config.seed, counts[game], config.prompt)
            for game, factory in factories.items()
        }
        standalone = not config.mixed and factories[games[0]]._mode == "answer"
        environment_factory: Any = None
        if not standalone:
            environment_factory = factories if config.mixed else factories[games[0]]
        judges = 1 if config.transport == "inprocess" else config.verify_connections
        judge = AnswerJudge([factories[games[0]]() for _ in range(judges)] if standalone else None)
        stack.callback(judge.close)
        functions, weights = [], []
        for game in games:
            game_weights = config.reward_weights(game)
            if config.server_reward:  # the server's reward counts; the solve rate is logged
                solved = load_spec(game).solved
                game_weights = {solved: 0.0} | ({"server": 1.0} if standalone else {})
            game_weights = game_weights | {"lost": 0.0}  # logged: episodes lost with the server
            game_functions, game_reward_weights = reward_functions(
                load_spec(game), game_weights, judge
            )
            functions += game_functions
            weights += game_reward_weights
        train_rows = data.mixed_rows(rows) if config.mixed else rows[games[0]]
        args = grpo_args(config)
        args.reward_weights = weights
        metrics = MetricsFile(output_dir / "metrics.jsonl", solve_keys=solve_keys(games))

        class Trainer(GRPOTrainer):
            def create_model_card(self, *args: Any, **kwargs: Any) -> None:
                if self.is_world_process_zero():
                    write_model_card(config, metrics.last)

            def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> Any:
                self._batch_rows = inputs
                return super()._generate_and_score_completions(inputs)

            def _generate(self, prompts: list[Any]) -> Any:
                """Also start judging the replies, which then overlaps TRL's scoring."""
                output = super()._generate(prompts)
                judge_early(judge, output, getattr(self, "_batch_rows", None))
                return output

        trainer = Trainer(
            model=model_path(config),
            reward_funcs=functions,
            args=args,
            train_dataset=Dataset.from_list(train_rows),
            environment_factory=environment_factory,
            peft_config=peft_config(config),
            callbacks=[
                metrics,
                RichProgress(progress_label(games), metrics),
                TimeLimit(config.max_time_s),
            ],
        )
        trainer.remove_callback(PrinterCallback)  # the progress bar and metrics.jsonl say it
        resume_from = last_complete_checkpoint(output_dir) if config.resume else None
        if resume_from is not None and _finished(resume_from, trainer):
            logger.warning("%s already reached the last step: the run is complete", resume_from)
            _publish(resume_from, output_dir)
            return output_dir
        if resume_from is not None:
            logger.warning("resuming from %s", resume_from)
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
        trainer.save_model(str(output_dir))
        assert trainer.processing_class is not None  # GRPOTrainer loads the model's tokenizer
        trainer.processing_class.save_pretrained(str(output_dir))
        write_model_card(config, metrics.last)
    return output_dir


def judge_early(judge: Any, generated: Any, rows: list[dict[str, Any]] | None) -> None:
    """Start ``judge`` on the completions of TRL's ``_generate`` output (its fourth item, in
    TRL 1.16), with the batch's ``rows`` as the reward functions' columns. Where that output
    is not what it was, nothing starts and the rewards judge the replies as before."""
    completions = generated[3] if isinstance(generated, tuple) and len(generated) > 3 else None
    if not rows or not isinstance(completions, list) or len(completions) != len(rows):
        return
    skip = {"prompt", "completion", "completion_ids"}
    columns = {key: [row[key] for row in rows] for key in rows[0] if key not in skip}
    judge.start(completions, columns)


def _finished(checkpoint: Path, trainer: Any) -> bool:
    state = json.loads((checkpoint / "trainer_state.json").read_text())
    return 0 < trainer.args.max_steps <= int(state.get("global_step", 0))


TRAINING_STATE = {
    "optimizer.pt",
    "scheduler.pt",
    "rng_state.pth",
    "trainer_state.json",
    "training_args.bin",
}


def _publish(checkpoint: Path, output_dir: Path) -> None:
    """Make the checkpoint's model the final model in ``output_dir`` (a run killed after its
    last checkpoint but before the final save)."""
    for item in checkpoint.iterdir():
        if item.is_file() and item.name not in TRAINING_STATE:
            shutil.copy2(item, output_dir / item.name)


def solve_keys(games: list[str]) -> dict[str, str]:
    """Per game, the metric TRL logs for its "solved" reward."""
    from env_servers.core.registry import load_spec

    return {game: f"rewards/{game}_{load_spec(game).solved}/mean" for game in games}


def progress_label(games: list[str]) -> dict[str, str]:
    """Per game, the word for a solved episode ("won", "solved")."""
    from env_servers.core.registry import load_spec

    return {game: load_spec(game).solved_word for game in games}
