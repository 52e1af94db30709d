"""A small Qwen3 model and tokenizer built offline from a config, for experiments that
cannot download weights: a byte-level BPE trained on the given texts (digits split one per
token, so arithmetic sees every digit), Qwen's special tokens and TRL's exact Qwen3 chat
template, and a randomly initialised ``Qwen3ForCausalLM`` of the given shape."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trainer.tiny import SPECIAL_TOKENS

DEFAULT_ARCH: dict[str, int] = {
    "hidden_size": 512,
    "intermediate_size": 1408,
    "num_hidden_layers": 8,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 64,
}
"""About 24M parameters with a 1k vocabulary."""


def build_tokenizer(
    corpus: Iterable[str], vocab_size: int = 1024, *, split_digits: bool = True
) -> Any:
    """A ``PreTrainedTokenizerFast`` trained on ``corpus``, with Qwen's special tokens and the
    Qwen3 chat template; ``split_digits`` makes every digit a token of its own."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_chat_template

    bpe = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        if split_digits
        else byte_level
    )
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=SPECIAL_TOKENS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
    )
    tokenizer.chat_template = qwen3_chat_template
    return tokenizer


def build_model(
    directory: str | Path,
    corpus: Iterable[str],
    *,
    arch: Mapping[str, int] | None = None,
    vocab_size: int = 1024,
    seed: int = 0,
) -> Path:
    """Write a randomly initialised Qwen3 model of shape ``arch`` and its tokenizer to
    ``directory``; returns the directory."""
    tokenizer = build_tokenizer(corpus, vocab_size)
    model = new_model(tokenizer, {**DEFAULT_ARCH, **(arch or {})}, max_positions=1024, seed=seed)
    return save_model(model, tokenizer, directory)


def new_model(tokenizer: Any, arch: Mapping[str, Any], *, max_positions: int, seed: int) -> Any:
    """A randomly initialised Qwen3 model of shape ``arch`` (seeded) for ``tokenizer``, its
    generation ending and padding with the tokenizer's tokens."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        **arch,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def save_model(model: Any, tokenizer: Any, directory: str | Path) -> Path:
    """Save ``model`` and ``tokenizer`` to ``directory`` (made if missing); returns it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def parameter_count(directory: str | Path) -> int:
    """Parameters of the model saved in ``directory``."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(directory))
    return sum(p.numel() for p in model.parameters())
