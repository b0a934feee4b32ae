"""The tinker sampler: ServiceClient -> SamplingClient, the model's own chat
template as its renderer, usage from the token counts.

Narrow on purpose: these are the only SDK surfaces called, and the tests fake
exactly these. The SDK retries a request for up to two hours by default; here
its progress timeout is bounded by the controller's per-call deadline, and
every wait (client creation, each sample) has a timeout of its own. The API key
is read by the SDK from the host's environment; it never reaches the worker.
"""

import concurrent.futures

from ._deadline import call_with_deadline
from ._errors import CallTimeout, SamplerError
from ._sampling import Completion, Prepared, request_sha256


def _default_sdk():
    import tinker
    from tinker.lib.retry_handler import RetryConfig
    return tinker, RetryConfig


class TinkerSampler:
    provider = "tinker"

    def __init__(self, model_id, deadline_s, temperature_milli=700, seed=0, sdk=None):
        tinker, RetryConfig = sdk or _default_sdk()
        self.tinker = tinker
        self.model_id = model_id
        self.deadline_s = deadline_s
        self.sampling = {"temperature_milli": temperature_milli, "seed": seed}
        retry = RetryConfig(progress_timeout=deadline_s)

        def setup():  # session setup blocks on the network inside the SDK: bounded as a whole
            service = tinker.ServiceClient()
            client = service.create_sampling_client(base_model=model_id, retry_config=retry).result(timeout=deadline_s)
            return service, client, client.get_tokenizer()
        try:
            self.service, self.client, self.tokenizer = call_with_deadline(setup, deadline_s, "tinker setup")
        except (CallTimeout, TimeoutError, concurrent.futures.TimeoutError):
            raise CallTimeout(f"tinker: no sampling client for {model_id} within {deadline_s} s")
        except Exception as exc:  # the SDK's own errors: report one line, keep the type
            raise SamplerError(f"tinker: cannot create a sampling client for {model_id} ({type(exc).__name__}: {exc})")

    def render(self, messages):
        """Token ids of the conversation with the generation prompt, by the model's chat template."""
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                 return_dict=False)
        if hasattr(ids, "get") and ids.get("input_ids") is not None:
            ids = ids["input_ids"]
        return [int(t) for t in ids]

    def prepare(self, messages, max_tokens) -> Prepared:
        tokens = self.render(messages)
        return Prepared(request_sha256(self.model_id, messages, max_tokens, self.sampling), len(tokens), max_tokens,
                        messages, payload=tokens)

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        types = self.tinker.types
        params = types.SamplingParams(max_tokens=prepared.max_tokens,
                                      temperature=self.sampling["temperature_milli"] / 1000,
                                      seed=self.sampling["seed"])
        future = self.client.sample(prompt=types.ModelInput.from_ints(prepared.payload), num_samples=1,
                                    sampling_params=params)
        try:
            response = future.result(timeout=deadline_s)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.future().cancel()
            raise CallTimeout(f"tinker: no answer within {deadline_s} s")
        except Exception as exc:
            raise SamplerError(f"tinker: sample failed ({type(exc).__name__}: {exc})")
        sequence = response.sequences[0]
        tokens = list(sequence.tokens)
        return Completion(self.tokenizer.decode(tokens, skip_special_tokens=True), len(prepared.payload), len(tokens),
                          str(getattr(sequence.stop_reason, "value", sequence.stop_reason)))
