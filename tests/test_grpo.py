"""GRPO through TRL on real MiniWoB++ episodes: a tiny randomly initialised model (built here, nothing
downloaded) acts in real browsers through the rollout collector, TRL normalises the episodes' rewards per
group and updates the model; the sampled tokens' log-probabilities are the model's own."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("trl")

import pandas as pd  # noqa: E402 - after the optional-extra check
import torch  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from webarena_gym.experiments.grpo import EpisodeRollouts, episode_reward, task_dataset, toy_policy_model  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CLICK = "In summary, the next action I will perform is ```click [13]```"  # click-test's one button
STOP = "In summary, the next action I will perform is ```stop [done]```"
GROUP = 4


def trainer_for(tmp_path, steps: int) -> GRPOTrainer:
    model, tokenizer = toy_policy_model([CLICK, STOP], seed=0)
    config = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=GROUP,
        num_generations=GROUP,
        max_completion_length=1,
        generation_kwargs={"suppress_tokens": [tokenizer.pad_token_id, tokenizer.unk_token_id]},
        learning_rate=0.05,
        max_steps=steps,
        logging_steps=1,
        log_completions=True,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=3,
    )
    return GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=episode_reward,
        args=config,
        train_dataset=task_dataset("miniwob/click-test", instances=2),
        rollout_func=EpisodeRollouts(workers=1),  # one worker: the model samples in a fixed order (seeded)
    )


def test_grpo_steps_on_real_episodes_update_the_model_from_group_normalised_rewards(tmp_path):
    trainer = trainer_for(tmp_path, steps=2)
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()

    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    tables = sorted((tmp_path / "completions").glob("completions_*.parquet"))
    assert len(tables) == 2
    varied = False
    for table in tables:
        rows = pd.read_parquet(table)
        assert len(rows) == GROUP and rows["prompt"].nunique() == 1  # one group: one task instance
        # the real env's evaluator: clicking click-test's button solves it, stopping does not
        assert [r for r in rows["episode_reward"]] == [1.0 if c == CLICK else 0.0 for c in rows["completion"]]
        rewards = torch.tensor(rows["episode_reward"].to_list())
        expected = (rewards - rewards.mean()) / (rewards.std() + 1e-4)  # GRPO's per-group normalisation
        assert torch.allclose(torch.tensor(rows["advantage"].to_list()), expected, atol=1e-5)
        varied |= bool(rewards.std() > 0)
    assert varied, "the seeded run should draw both answers in a group"
    changed = [name for name, p in trainer.model.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert changed, "a group with different rewards must move the weights"


def test_rollouts_return_the_sampled_ids_and_their_log_probabilities(tmp_path):
    trainer = trainer_for(tmp_path, steps=1)
    tokenizer = trainer.processing_class
    out = EpisodeRollouts(workers=1)(["miniwob/click-test@0"] * GROUP, trainer)
    assert len(out["completion_ids"]) == GROUP
    model = trainer.model.eval()
    allowed = torch.tensor(tokenizer.convert_tokens_to_ids([CLICK, STOP]))
    for prompt_ids, completion_ids, logprobs, reward in zip(
        out["prompt_ids"], out["completion_ids"], out["logprobs"], out["episode_reward"], strict=True
    ):
        assert len(prompt_ids) > 100  # the page's prompt as the model read it (its words are all unknown)
        assert len(completion_ids) == len(logprobs) == 1 and completion_ids[0] in allowed
        assert reward == (1.0 if completion_ids[0] == allowed[0] else 0.0)
        with torch.no_grad():
            logits = model(torch.tensor([prompt_ids])).logits[0, -1]
        expected = torch.log_softmax(logits[allowed], dim=-1)[allowed.tolist().index(completion_ids[0])]
        assert logprobs[0] == pytest.approx(expected.item(), abs=1e-4)
