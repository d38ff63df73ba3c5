"""Writing training files that fine-tuning libraries read directly, and checking them.

* Chat JSONL: one object per example with a ``messages`` list of ``{"role", "content"}`` (system, user,
  assistant), the layout TRL's SFT trainer, torchtune's chat datasets (OpenAI style) and LLaMA-Factory's
  ShareGPT format (with the tags in ``dataset_info.json``) read.
* Rendered records (Plan-and-Act's released training files): torchtune's ``{"input", "output"}`` and LLaMA-Factory's
  ``{"instruction", "input": "", "output"}``, the prompt rendered with a chat template and the generation
  prompt (built in: ``llama3``, the paper's models; or any Jinja chat template file, rendered sandboxed).
* A Hugging Face ``datasets`` layout: the directory's ``README.md`` declares one configuration per file
  set with its splits, so ``datasets.load_dataset(directory, name)`` loads it. :func:`check_layout` checks
  what that loader needs (declared files exist, every line a JSON object, one set of columns with one
  type each) without the library.
* Records never carry credentials or machine paths (:func:`sanitize`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from webarena_gym.llm import Message
from webarena_gym.llm.files import write_atomic
from webarena_gym.llm.redaction import redact, redacted_json, write_text

ChatTemplate = Callable[[Sequence[Message]], str]


# -- chat templates ------------------------------------------------------------------------------------


def render_llama3(messages: Sequence[Message]) -> str:
    """Llama 3's chat format with the assistant's header opened for generation."""
    parts = ["<|begin_of_text|>"]
    for m in messages:
        parts.append(f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{str(m['content']).strip()}<|eot_id|>")
    parts.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
    return "".join(parts)


def chat_template(name: str) -> ChatTemplate | None:
    """``"llama3"``, ``"none"`` (no rendered files) or the path of a Jinja chat template (the
    ``chat_template`` string of a model's tokenizer config), rendered in Jinja's sandbox."""
    if name == "none":
        return None
    if name == "llama3":
        return render_llama3
    from jinja2.exceptions import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(Path(name).read_text())
    return lambda messages: template.render(
        messages=list(messages), add_generation_prompt=True, bos_token="", eos_token=""
    )


# -- records -------------------------------------------------------------------------------------------

_HOME = str(Path.home())


def sanitize(value: Any, roots: Sequence[str | os.PathLike[str]] = ()) -> Any:
    """``value`` with credentials redacted and machine paths (``roots``, the home directory) removed."""
    if isinstance(value, dict):
        return {k: sanitize(v, roots) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitize(v, roots) for v in value]
    if isinstance(value, str):
        text = redact(value)
        for root in sorted((str(r) for r in roots), key=len, reverse=True):
            text = text.replace(root.rstrip("/") + "/", "").replace(root, ".")
        return text.replace(_HOME, "~") if len(_HOME) > 1 else text
    return value


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [redacted_json(record) + "\n" for record in records]
    write_atomic(path, "".join(lines))
    return len(lines)


def chat_record(messages: Sequence[Message], answer: str, **meta: Any) -> dict[str, Any]:
    """A chat example: the prompt's messages plus the answer as the assistant's message."""
    shown = [{"role": m["role"], "content": str(m["content"])} for m in messages]
    return {"messages": [*shown, {"role": "assistant", "content": answer}], **meta}


def rendered_records(
    messages: Sequence[Message], answer: str, template: ChatTemplate, opener: str = "", **meta: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(torchtune record, LLaMA-Factory record) of one example; ``opener`` follows the generation prompt
    (``<think>\\n`` for CoT targets, whose reasoning ends at ``</think>``)."""
    prompt = template(messages) + opener
    return {"input": prompt, "output": answer, **meta}, {"instruction": prompt, "input": "", "output": answer, **meta}


# -- layouts -------------------------------------------------------------------------------------------


def write_card(out: Path, title: str, configs: dict[str, dict[str, str]], body: str) -> None:
    """``README.md`` with the configurations (name -> split -> relative file) ``datasets`` loads."""
    lines = ["---", "configs:" if configs else "configs: []"]  # nothing selected: still a valid card
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        for split, path in splits.items():
            lines += [f"  - split: {split}", f"    path: {json.dumps(path)}"]
    lines += ["---", "", f"# {title}", "", body.strip(), ""]
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "README.md", "\n".join(lines))


def llamafactory_entries(files: dict[str, str], chat: bool) -> dict[str, Any]:
    """``dataset_info.json`` entries: chat files in ShareGPT form (OpenAI tags), rendered ones as Alpaca."""
    if chat:
        tags = {
            "role_tag": "role",
            "content_tag": "content",
            "user_tag": "user",
            "assistant_tag": "assistant",
            "system_tag": "system",
        }
        return {
            name: {"file_name": path, "formatting": "sharegpt", "columns": {"messages": "messages"}, "tags": tags}
            for name, path in files.items()
        }
    columns = {"prompt": "instruction", "query": "input", "response": "output"}
    return {name: {"file_name": path, "columns": columns} for name, path in files.items()}


def split_groups(
    records: list[dict[str, Any]], group: Callable[[dict[str, Any]], str], fraction: float, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, validation): whole groups (tasks) held out, so no task is on both sides."""
    from webarena_gym.experiments.synth.splits import validation_groups

    held = validation_groups([group(r) for r in records], fraction, seed)
    return [r for r in records if group(r) not in held], [r for r in records if group(r) in held]


_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        kinds = {_kind(v) for v in value} - {"null"}
        return f"list[{'|'.join(sorted(kinds))}]"
    if isinstance(value, dict):
        return "struct{" + ",".join(f"{k}:{_kind(v)}" for k, v in sorted(value.items())) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def check_layout(out: str | Path) -> dict[str, dict[str, int]]:
    """Check a directory the way ``datasets`` will read it; returns rows per config and split.

    Raises ``ValueError`` naming the file and line of the first problem: a declared file that is missing
    or empty, a line that is not a JSON object, or a column that is missing or changes type (null aside), which the
    Arrow JSON reader refuses."""
    import yaml

    out = Path(out)
    card = _FRONT_MATTER.match((out / "README.md").read_text())
    if not card:
        raise ValueError("README.md has no YAML front matter with configs")
    configs = yaml.safe_load(card.group(1)).get("configs") or []
    rows: dict[str, dict[str, int]] = {}
    for config in configs:
        name = config["config_name"]
        columns: dict[str, str] = {}
        for entry in config["data_files"]:
            path = out / entry["path"]
            if not path.exists():
                raise ValueError(f"config {name}: {entry['path']} is declared but missing")
            n = 0
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError(f"{entry['path']}:{i} is not a JSON object")
                if columns and set(record) != set(columns):
                    raise ValueError(f"{entry['path']}:{i} has columns {sorted(record)}, others {sorted(columns)}")
                for key, value in record.items():
                    kind = _kind(value)
                    known = columns.setdefault(key, kind)
                    if known == "null":
                        columns[key] = kind
                    elif kind != "null" and kind != known and not _compatible(known, kind):
                        raise ValueError(f"{entry['path']}:{i}: column {key} is {kind} here, {known} before")
                n += 1
            if not n:
                raise ValueError(f"config {name}: {entry['path']} is empty (the JSON reader refuses empty files)")
            rows.setdefault(name, {})[entry["split"]] = n
    return rows


def _compatible(a: str, b: str) -> bool:
    """Two value shapes Arrow reads as one type: lists/structs whose only difference is empty or null parts."""
    return a.startswith("list[") and b.startswith("list[") and ("list[]" in (a, b))
