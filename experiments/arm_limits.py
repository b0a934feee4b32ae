"""The model arms' fixed limits (every provider's: experiments/arm_model.py and arm_api.py), hashed into each
arm's configuration: a change is another arm."""

LIMITS = {"worker_seconds": 3600, "call_deadline_s": 600, "max_tokens_per_call": 1024, "max_calls": 60}
