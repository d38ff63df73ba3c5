"""GRPO training of a Hugging Face causal LM on this harness's episodes, through TRL's ``GRPOTrainer``.

    from trl import GRPOConfig, GRPOTrainer
    from webarena_gym.experiments.grpo import EpisodeRollouts, episode_reward, task_dataset

    trainer = GRPOTrainer(
        model=model,                      # a causal LM, trained in this process
        processing_class=tokenizer,       # with a chat template; padding side "left"
        reward_funcs=episode_reward,
        args=GRPOConfig(num_generations=4, max_completion_length=64, log_completions=True, ...),
        train_dataset=task_dataset("miniwob:click-test,click-button", instances=8),
        rollout_func=EpisodeRollouts(workers=2),
    )
    trainer.train()

How it plugs in, and why. TRL offers three places to put an environment: a reward function, a
``rollout_func``, or feeding its loss by hand. A reward function only scores text TRL has already
generated from a fixed prompt, but a web episode's prompt is the page the env shows, which exists only
once the episode runs; feeding the loss by hand means calling the trainer's private loss method and
redoing its batching, advantage and logging code. ``rollout_func`` is TRL's documented hook for
generation that happens elsewhere: it gets the batch's prompts and returns, per completion, the prompt's
and completion's token ids and the sampled tokens' log-probabilities; TRL then computes the rewards, the
per-group advantages, the loss and the update as for any GRPO run. So :class:`EpisodeRollouts` is that
hook: each dataset prompt names a task instance (env id and seed, :func:`task_dataset`); it runs the
instance's ``num_generations`` episodes with :func:`experiments.llm_rollouts.collect`, whose model is the
trainer's own (generating in this process; the workers send their prompts here), keeps the token ids and
log-probabilities of what was sampled, and hands the episodes' rewards on to :func:`episode_reward`.
TRL groups the ``num_generations`` consecutive completions of one prompt, so a GRPO group is exactly
``collect``'s group: rollouts of the same task and seed, whose mean reward is each rollout's baseline.

One decision per episode. A TRL sample is one prompt and one completion, and its advantages are the
rewards reshaped to ``(-1, num_generations)``, so every rollout must give exactly one sample: episodes
are capped at one step (``max_steps=1``), which covers MiniWoB++'s single-action tasks. Multi-step
credit assignment is not done here.

An episode that ended in an error (the browser, the sites, the model call) did not measure the policy:
its reward is None, which TRL counts as unscorable (left out of its group's baseline, advantage 0).

``python -m webarena_gym.experiments.grpo`` runs a short demonstration on MiniWoB++ on CPU (see
``main``); TRL prints every step's completions, rewards and advantages, then the loss and gradient norm.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from typing import Any

from webarena_gym.experiments.llm_rollouts import Messages, Rollout, collect

_SEP = "@"  # a dataset prompt is "<env id>@<seed>"


def task_dataset(tasks: str | Sequence[str], *, instances: int = 1, seed: int = 0) -> Any:
    """A ``datasets.Dataset`` with one row per task instance (``seed, seed + 1, ...`` for each task),
    whose ``prompt`` names it for :class:`EpisodeRollouts`."""
    from datasets import Dataset

    from webarena_gym.experiments import tasksets

    infos = tasksets.resolve(tasks if isinstance(tasks, str) else ",".join(tasks))
    return Dataset.from_dict({"prompt": [f"{t.env_id}{_SEP}{seed + k}" for t in infos for k in range(instances)]})


def episode_reward(completions: list[Any], episode_reward: list[float | None], **_: Any) -> list[float | None]:
    """TRL reward function: the reward the task's evaluator gave each completion's episode (None: the
    episode ended in an error, so TRL leaves it out)."""
    return list(episode_reward)


class EpisodeRollouts:
    """TRL ``rollout_func``: every prompt's task instance run as episodes of ``policy`` whose model is the
    trainer's; returns the sampled token ids, their log-probabilities and the episodes' rewards.

    ``workers``: browser processes; ``policy_config`` and ``env_kwargs`` go to ``collect`` unchanged.
    """

    def __init__(
        self,
        *,
        policy: str = "react",
        workers: int = 2,
        policy_config: dict[str, Any] | None = None,
        env_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.policy = policy
        self.workers = workers
        self.policy_config = dict(policy_config or {})
        self.env_kwargs = dict(env_kwargs or {})

    def __call__(self, prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        size = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        if len(prompts) % size:
            raise ValueError(f"{len(prompts)} prompts do not make groups of {size}")
        instances = [_instance(prompts[i]) for i in range(0, len(prompts), size)]
        sampler = _Sampler(trainer)
        # collect takes a list of tasks at one seed: one call per seed the batch holds
        rollouts: dict[tuple[str, int], list[Rollout]] = {}
        for seed in dict.fromkeys(s for _, s in instances):
            env_ids = list(dict.fromkeys(e for e, s in instances if s == seed))
            repeats = max(instances.count((e, seed)) for e in env_ids)  # an instance the batch drew twice
            rollouts.update(
                collect(
                    sampler,
                    env_ids,
                    size * repeats,
                    policy=self.policy,
                    workers=self.workers,
                    seed=seed,
                    max_steps=1,
                    batched=True,
                    policy_config=self.policy_config,
                    env_kwargs=self.env_kwargs,
                )
            )
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "episode_reward")}
        taken: dict[tuple[str, int], int] = {}
        for key in instances:
            start = taken.get(key, 0)
            taken[key] = start + size
            for rollout in rollouts[key][start : start + size]:
                prompt_ids, completion_ids, logprobs = sampler.sample_of(rollout)
                out["prompt_ids"].append(prompt_ids)
                out["completion_ids"].append(completion_ids)
                out["logprobs"].append(logprobs)
                out["episode_reward"].append(None if rollout.error else rollout.reward)
        return out


def _instance(prompt: str) -> tuple[str, int]:
    env_id, _, seed = str(prompt).rpartition(_SEP)
    if not env_id or not seed.lstrip("-").isdigit():
        raise ValueError(f"a prompt must name a task instance as '<env id>{_SEP}<seed>' (see task_dataset): {prompt!r}")
    return env_id, int(seed)


class _Sampler:
    """The trainer's model as ``collect``'s batched model: samples with the trainer's generation settings
    and keeps, per prompt, the token ids and log-probabilities of what it sampled."""

    def __init__(self, trainer: Any) -> None:
        self.model = trainer.accelerator.unwrap_model(trainer.model)
        self.tokenizer = trainer.processing_class
        self.args = trainer.args
        self.samples: dict[str, list[tuple[str, list[int], list[int], list[float]]]] = {}

    def render(self, messages: Messages) -> str:
        return str(self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def __call__(self, prompts: list[Messages]) -> list[str]:
        import torch

        texts = [self.render(m) for m in prompts]
        batch = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        batch = batch.to(self.model.device)
        options = {"temperature": self.args.temperature, "top_p": self.args.top_p, "top_k": self.args.top_k}
        options.update(self.args.generation_kwargs or {})
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                out = self.model.generate(
                    **batch,
                    do_sample=True,
                    max_new_tokens=self.args.max_completion_length,
                    pad_token_id=self.tokenizer.pad_token_id,
                    return_dict_in_generate=True,
                    output_scores=True,
                    **options,
                )
                scores = self.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
        finally:
            self.model.train(was_training)
        width = batch["input_ids"].shape[1]
        stop = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
        answers = []
        for row, text in enumerate(texts):
            ids = out.sequences[row, width:].tolist()
            end = next((i + 1 for i, t in enumerate(ids) if t in stop), len(ids))  # through the first EOS
            prompt_ids = batch["input_ids"][row][batch["attention_mask"][row].bool()].tolist()
            answer = self.tokenizer.decode(ids[:end], skip_special_tokens=True)
            logprobs = [float(x) for x in scores[row, :end].tolist()]
            self.samples.setdefault(text, []).append((answer, prompt_ids, ids[:end], logprobs))
            answers.append(answer)
        return answers

    def sample_of(self, rollout: Rollout) -> tuple[list[int], list[int], list[float]]:
        """The ids and log-probabilities sampled for the rollout's decision; an episode that never asked
        the model (it failed before) gets a one-token stand-in, which its None reward keeps out of training."""
        turn = rollout.turns[0] if rollout.turns else None
        if turn is not None:
            candidates = self.samples.get(self.render(turn.messages), [])
            for i, (answer, prompt_ids, completion_ids, logprobs) in enumerate(candidates):
                if answer == turn.completion:
                    del candidates[i]
                    return prompt_ids, completion_ids, logprobs
        if rollout.error is None:
            raise RuntimeError(f"no sample recorded for {rollout.env_id} seed {rollout.seed} #{rollout.index}")
        return [self.tokenizer.pad_token_id], [self.tokenizer.pad_token_id], [0.0]


# -- demonstration ------------------------------------------------------------------------------------

_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def toy_policy_model(answers: Sequence[str], *, seed: int = 0) -> tuple[Any, Any]:
    """A randomly initialised 2-layer GPT-2 and a tokenizer built here (no download) whose only
    generable tokens are ``answers``, each one token: a policy over a fixed answer set, small enough to
    train on CPU in seconds. Prompt words all read as one unknown token."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    core = Tokenizer(models.WordLevel({"<pad>": 0, "<unk>": 1}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<pad>", unk_token="<unk>", padding_side="left"
    )
    tokenizer.add_tokens(list(answers))
    tokenizer.chat_template = _TEMPLATE
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=4096, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config), tokenizer


def main(argv: Sequence[str] | None = None) -> int:
    """A few GRPO steps on MiniWoB++'s click-test with the toy policy (or ``--model``, a local Hugging Face
    model directory)."""
    parser = argparse.ArgumentParser(prog="python -m webarena_gym.experiments.grpo", description=main.__doc__)
    parser.add_argument("--tasks", default="miniwob:click-test")
    parser.add_argument("--model", default=None, help="a local causal LM directory (default: the toy policy)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--n", type=int, default=4, help="rollouts per task instance (the GRPO group)")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-completion-length", type=int, default=None)
    args = parser.parse_args(argv)

    from trl import GRPOConfig, GRPOTrainer

    extra: dict[str, Any] = {}
    if args.model is None:
        answers = [f"In summary, the next action I will perform is ```{a}```" for a in ("click [13]", "stop [done]")]
        model, tokenizer = toy_policy_model(answers)
        extra = {"generation_kwargs": {"suppress_tokens": [0, 1]}, "learning_rate": 0.05}  # answer tokens only
        length = args.max_completion_length or 1
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(args.model)
        tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
        length = args.max_completion_length or 64
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            per_device_train_batch_size=args.n,
            num_generations=args.n,
            max_completion_length=length,
            max_steps=args.steps,
            logging_steps=1,
            log_completions=True,
            report_to="none",
            save_strategy="no",
            use_cpu=True,
            **extra,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=episode_reward,
            args=config,
            train_dataset=task_dataset(args.tasks, instances=args.instances),
            rollout_func=EpisodeRollouts(workers=args.workers),
        )
        trainer.train()
    for entry in trainer.state.log_history:
        if "loss" in entry:
            print(
                f"step {entry['step']}: loss {entry['loss']:.4f}, grad norm {entry['grad_norm']:.4f}, "
                f"mean reward {entry['reward']:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
