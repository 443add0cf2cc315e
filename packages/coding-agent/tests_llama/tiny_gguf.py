"""A tiny llama-architecture GGUF with random weights, for running a real llama.cpp server in tests.

Its replies are noise, but everything around them is real: the server's tokenizer, chat template, context
window, streaming and model management. The vocabulary is a SentencePiece-style one with byte fallback (every
text can be tokenized), the printable ASCII characters and the ChatML control tokens; `n_ctx` is the model's
own context length, which caps each server slot.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _vocab() -> tuple[list[bytes], list[float], list[int]]:
    tokens: list[bytes] = [b"<unk>", b"<s>", b"</s>", b"<|im_start|>", b"<|im_end|>"]
    kinds = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    kinds += [gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>".encode() for b in range(256)]
    kinds += [gguf.TokenType.BYTE] * 256
    printable = ["\u2581", *(chr(c) for c in range(33, 127))]
    tokens += [p.encode() for p in printable]
    kinds += [gguf.TokenType.NORMAL] * len(printable)
    scores = [0.0] * 5 + [-1000.0] * 256 + [-float(i) for i in range(len(printable))]
    return tokens, scores, [int(k) for k in kinds]


def write_tiny_model(path: Path, *, n_ctx: int, n_embd: int = 64, n_layer: int = 1, n_head: int = 4) -> Path:
    """Write the model to `path` (about 0.3 MB) and return it."""
    tokens, scores, kinds = _vocab()
    vocab, n_ff = len(tokens), n_embd * 2
    rng = np.random.default_rng(7)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(path.stem)
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(kinds)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(4)
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)

    writer.add_tensor("token_embd.weight", weight(vocab, n_embd))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", weight(vocab, n_embd))
    for block in range(n_layer):
        prefix = f"blk.{block}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}.{name}.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weight(n_embd, n_ff))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


__all__ = ["write_tiny_model"]
