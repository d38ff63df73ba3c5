"""JSON Schemas of every file the pipeline writes, and of the training files exported from it.

``validate_file(kind, path)`` checks every line of a JSONL file against its schema and returns the
records; the test suite and anyone consuming a run can use it. Beyond the schemas, every record of a
generated item names its teacher (role, model, temperature, sampling seed) and no record holds a
credential or a machine path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_STR = {"type": "string"}
_STR_OR_NULL = {"type": ["string", "null"]}
_INT = {"type": "integer", "minimum": 0}
_SHA = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
TEACHER = {
    "type": "object",
    "required": ["role", "model", "temperature", "seed"],
    "additionalProperties": False,
    "properties": {"role": _STR, "model": _STR, "temperature": {"type": "number"}, "seed": _INT},
}
_TEACHER_OR_NULL = {"oneOf": [TEACHER, {"type": "null"}]}
_PLAN_STEP = {
    "type": "object",
    "required": ["number", "reasoning", "step"],
    "properties": {"number": _INT, "reasoning": _STR, "step": _STR},
}
_GROUNDED_STEP = {
    "type": "object",
    "required": ["number", "reasoning", "description", "step", "actions"],
    "properties": {
        "number": _INT,
        "reasoning": _STR,
        "description": _STR,
        "step": _STR,
        "actions": {"type": "array", "items": _INT, "minItems": 1},
    },
}
_PLAN_TEXT = {"type": "string", "pattern": "^## Step 1\\n"}


def _record(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["key", *required],
        "properties": {"key": _STR, **required, **(optional or {})},
        "additionalProperties": False,
    }


_BATCH = {"batch": _STR, "batch_size": {"type": "integer", "minimum": 1}}
_ANCHOR = {
    "trajectory": _STR,
    "step": _INT,
    "task_id": _STR,
    "env_id": _STR,
    "site": _STR,
    "intent": _STR,
    "page": _SHA,
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "queries": _record(
        {
            **_BATCH,
            "index": _INT,
            "site": _STR,
            "seeds": {"type": "array", "items": _STR, "minItems": 1},
            "start_task": _STR,
            "intent": {"type": "string", "minLength": 1},
            "feasible": {"type": "boolean"},
            "reason": _STR,
            "dropped": _STR_OR_NULL,
            "teacher": TEACHER,
            "checker": TEACHER,
        }
    ),
    "trajectories": _record(
        {
            "source": {"enum": ["synthetic", "seed", "imported"]},
            "study": _STR,
            "episode": _STR,
            "env_id": _STR,
            "task_id": _STR,
            "site": _STR,
            "sites": {"type": "array", "items": _STR},
            "intent": _STR,
            "policy": _STR,
            "model": _STR_OR_NULL,
            "page_format": {"enum": ["html", "text"]},
            "commands": {"type": "array", "items": _STR},
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["index", "url", "page", "action", "snippet"],
                    "additionalProperties": False,
                    "properties": {"index": _INT, "url": _STR, "page": _SHA, "action": _STR, "snippet": _STR_OR_NULL},
                },
            },
            "answer": _STR,
            "reward": {"type": "number"},
            "query": _STR_OR_NULL,
            "outcome": {
                "type": "object",
                "required": ["method", "success", "score", "reasoning", "teacher"],
                "properties": {
                    "method": {"enum": ["evaluator", "orm", "no_answer"]},
                    "success": {"type": "boolean"},
                    "score": {"type": "number"},
                    "reasoning": _STR,
                    "teacher": _TEACHER_OR_NULL,
                },
            },
            "kept": {"type": "boolean"},
        }
    ),
    "plans": _record(
        {
            **_ANCHOR,
            "n_actions": {"type": "integer", "minimum": 1},
            "steps": {"type": "array", "items": _GROUNDED_STEP, "minItems": 1},
            "plan": _PLAN_TEXT,
            "teacher": TEACHER,
        }
    ),
    "replans": _record(
        {
            **_ANCHOR,
            "previous_plans": {"type": "array", "items": _PLAN_TEXT, "minItems": 1},
            "previous_actions": {"type": "array", "items": _STR, "minItems": 1},
            "steps": {"type": "array", "items": _GROUNDED_STEP, "minItems": 1},
            "plan": _PLAN_TEXT,
            "annotated": _STR,
            "teacher": TEACHER,
        }
    ),
    "cot": _record(
        {
            **_ANCHOR,
            "kind": {"enum": ["plan", "replan", "action"]},
            "ref": _STR,
            "reasoning": {"type": "string", "minLength": 1},
            "output": {"type": "string", "minLength": 1},
            "teacher": TEACHER,
        }
    ),
    "expansion": _record(
        {
            **_BATCH,
            "index": _INT,
            "site": _STR,
            "intent": {"type": "string", "minLength": 1},
            "seeds": {"type": "array", "items": _STR, "minItems": 1},
            "seed_index": {"type": "integer", "minimum": 1},
            "source": _STR,
            "env_id": _STR,
            "page": _SHA,
            "steps": {"type": "array", "items": _PLAN_STEP, "minItems": 1},
            "plan": _PLAN_TEXT,
            "teacher": TEACHER,
        }
    ),
    "failures": _record(
        {
            "study": _STR,
            "env_id": _STR,
            "site": _STR,
            "intent": _STR,
            "label": {"type": "string", "pattern": "^([A-Z]|Other)$"},
            "reasoning": _STR,
            "teacher": _TEACHER_OR_NULL,
        }
    ),
    "classified": _record(
        {
            "point": _STR,
            "site": _STR,
            "label": {"type": "string", "pattern": "^([A-Z]|Other)$"},
            "reasoning": _STR,
            "teacher": TEACHER,
        }
    ),
    "targeted": _record(
        {
            "index": _INT,
            "seed": _STR,
            "label": {"type": "string", "pattern": "^[A-Z]$"},
            "site": _STR,
            "intent": {"type": "string", "minLength": 1},
            "env_id": _STR,
            "page": _SHA,
            "steps": {"type": "array", "items": _PLAN_STEP, "minItems": 1},
            "plan": _PLAN_TEXT,
            "teacher": TEACHER,
        }
    ),
    "rejected": _record(
        {"stage": {"type": "integer", "minimum": 1, "maximum": 4}, "error": _STR, "answer": _STR, "teacher": TEACHER},
        {"batch": _STR},
    ),
}

_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "additionalProperties": False,
    "properties": {"role": {"enum": ["system", "user", "assistant"]}, "content": _STR},
}
_META = {"task_id": _STR, "site": _STR, "study": _STR}
EXPORT_SCHEMAS: dict[str, dict[str, Any]] = {
    "chat": {
        "type": "object",
        "required": ["messages", *_META],
        "properties": {
            "messages": {
                "type": "array",
                "items": _MESSAGE,
                "minItems": 2,
                "contains": {"properties": {"role": {"const": "assistant"}}},
            },
            **_META,
        },
    },
    "torchtune": {
        "type": "object",
        "required": ["input", "output", *_META],
        "properties": {"input": _STR, "output": _STR, **_META},
    },
    "llamafactory": {
        "type": "object",
        "required": ["instruction", "input", "output", *_META],
        "properties": {"instruction": _STR, "input": {"const": ""}, "output": _STR, **_META},
    },
    "steps": {
        "type": "object",
        "required": ["observation", "action", "reward", "done", "model_output", "episode_reward", "policy", *_META],
        "properties": {
            "observation": _STR,
            "action": _STR_OR_NULL,
            "reward": {"type": "number"},
            "done": {"type": "boolean"},
            "model_output": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["role", "output"],
                    "properties": {"role": _STR, "output": _STR},
                },
            },
            "episode_reward": {"type": "number"},
            "policy": _STR,
            **_META,
        },
    },
}


def validate_records(kind: str, records: list[dict[str, Any]]) -> None:
    """Raise ``jsonschema.ValidationError`` (with the record's position) unless every record fits."""
    import jsonschema

    schema = SCHEMAS.get(kind) or EXPORT_SCHEMAS[kind]
    validator = jsonschema.Draft202012Validator(schema)
    for i, record in enumerate(records):
        error = jsonschema.exceptions.best_match(validator.iter_errors(record))
        if error is not None:
            where = "/".join(map(str, error.absolute_path)) or "<record>"
            raise jsonschema.ValidationError(f"{kind} record {i} ({record.get('key', '')}) at {where}: {error.message}")


def validate_file(kind: str, path: str | Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    validate_records(kind, records)
    return records
