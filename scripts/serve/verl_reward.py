"""verl_reward.py - an example custom reward function for verl-style RL trainers that scores generated CUDA
candidates with `stitchbench serve` through sbclient.py (docs/serve.md, "Training with it").

verl calls a custom reward function by path and name, e.g. in its config:

    custom_reward_function:
      path: scripts/serve/verl_reward.py
      name: compute_score            # one response at a time
    # or, with a batch reward manager, name: compute_score_batch (one call per batch: much faster)

The problem id comes from the sample's extra_info["problem"] (set it in the dataset, e.g. "L1/19"), else
from ground_truth. The endpoints come from $SB_SERVE_ENDPOINTS (a file written by scripts/serve/serve.sbatch,
or URL,URL,...), the token from $SB_SERVE_TOKEN, the reward kind from $SB_SERVE_REWARD (stitchcuda by default).
A candidate the servers could not judge (cannot_judge, harness_error) scores 0.0 here: a trainer needs a
number, and the result's reward_note says why (log it).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbclient import Client, read_endpoints  # noqa: E402

_client = None
FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


def _get_client():
    global _client
    if _client is None:
        _client = Client(read_endpoints(os.environ["SB_SERVE_ENDPOINTS"]), token=os.environ.get("SB_SERVE_TOKEN"))
    return _client


def extract_source(solution_str):
    """The last ```python block of the response, or the whole response when it has none."""
    blocks = FENCE.findall(solution_str)
    return blocks[-1] if blocks else solution_str


def _problem(ground_truth, extra_info):
    if isinstance(extra_info, dict) and extra_info.get("problem"):
        return extra_info["problem"]
    return str(ground_truth)


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):
    """One reward per response, judged as one batch spread over every endpoint."""
    cands = [{"problem": _problem(g, x), "source": extract_source(s)}
             for s, g, x in zip(solution_strs, ground_truths, extra_infos)]
    reward = os.environ.get("SB_SERVE_REWARD", "stitchcuda")
    results = _get_client().evaluate(cands, reward=reward)
    return [float(r["reward"]) if r.get("reward") is not None else 0.0 for r in results]


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """One response (slower: one request per call); prefer compute_score_batch."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]
