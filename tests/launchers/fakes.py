"""Fakes of exactly the tinker and modal surfaces the adapters call.

Only the network is replaced: every call is checked against the real SDK's
signature (tinker 0.38, modal 1.6) before it is answered, requests and
responses are the real `tinker.types` objects, and the "sandbox" runs the real
worker in a local subprocess.
"""

import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import modal
import numpy as np
import tinker
import tinker.types


def binds(real, *args, **kwargs):
    """The call as the real SDK would receive it: fails the test when it would not bind (or is silently ignored)."""
    sig = inspect.signature(real)
    named = {n for n, p in sig.parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    unknown = set(kwargs) - named
    assert not unknown, f"{real.__qualname__} has no parameter {sorted(unknown)}"
    sig.bind(*args, **kwargs)


# -- tinker ------------------------------------------------------------------------------


class FakeRetryConfig:
    def __init__(self, progress_timeout):
        self.progress_timeout = progress_timeout


class FakeTokenizer:
    """Characters as tokens; a chat template that tags roles."""

    def apply_chat_template(self, messages, add_generation_prompt, tokenize, return_dict):
        assert add_generation_prompt and tokenize and return_dict is False
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"
        return [ord(c) % 50000 for c in text]

    def decode(self, tokens, skip_special_tokens):
        return "".join(chr(t) for t in tokens)


class FakeConcurrentFuture:
    def __init__(self):
        self.cancelled = False

    def cancel(self):
        self.cancelled = True
        return True


class FakeFuture:
    def __init__(self, value=None, delay_s=0.0):
        self.value = value
        self.delay_s = delay_s
        self.timeouts = []
        self.inner = FakeConcurrentFuture()

    def result(self, timeout=None):
        self.timeouts.append(timeout)
        if self.delay_s and (timeout is None or self.delay_s > timeout):
            time.sleep(min(self.delay_s, timeout or self.delay_s))
            raise TimeoutError()
        return self.value

    def future(self):
        return self.inner


def response(text, cache_hit_tokens=0):
    """A real tinker SampleResponse carrying `text` as tokens (one character a token)."""
    sequence = tinker.types.SampledSequence(
        stop_reason="stop", sequence_id="seq-1", tokens_np=np.array([ord(c) for c in text], dtype=np.int32)
    )
    return tinker.types.SampleResponse(sequences=[sequence], prompt_cache_hit_tokens=cache_hit_tokens)


class FakeSamplingClient:
    def __init__(self, answer, delay_s, cache_hit_tokens):
        self.answer = answer
        self.delay_s = delay_s
        self.cache_hit_tokens = cache_hit_tokens
        self.requests = []
        self.futures = []

    def get_tokenizer(self):
        binds(tinker.SamplingClient.get_tokenizer, self)
        return FakeTokenizer()

    def sample(self, prompt, num_samples, sampling_params):
        binds(
            tinker.SamplingClient.sample, self, prompt=prompt, num_samples=num_samples, sampling_params=sampling_params
        )
        assert isinstance(prompt, tinker.types.ModelInput) and isinstance(sampling_params, tinker.types.SamplingParams)
        self.requests.append((prompt, num_samples, sampling_params))
        text = self.answer(prompt) if callable(self.answer) else self.answer
        future = FakeFuture(response(text, self.cache_hit_tokens), self.delay_s)
        self.futures.append(future)
        return future


class FakeTinker:
    """Stands in for the `tinker` module: ServiceClient (checked against the real one) and the real `types`."""

    types = tinker.types

    def __init__(
        self, answer='{"tool": "headroom", "arguments": {}}', delay_s=0.0, cache_hit_tokens=0, close_delay_s=0.0
    ):
        self.client = FakeSamplingClient(answer, delay_s, cache_hit_tokens)
        self.created = []
        self.service_kwargs = []
        self.closed = []
        fake = self

        class ServiceClient:
            def __init__(self, **kwargs):
                binds(tinker.ServiceClient.__init__, self, **kwargs)
                fake.service_kwargs.append(kwargs)
                fake.created.append(("service",))

            def create_sampling_client(self, base_model, retry_config):
                binds(
                    tinker.ServiceClient.create_sampling_client, self, base_model=base_model, retry_config=retry_config
                )
                fake.created.append(("sampling", base_model, retry_config.progress_timeout))
                return FakeFuture(fake.client)

            def close(self, status, detail=None):
                binds(tinker.ServiceClient.close, self, status, detail)
                assert status in ("success", "errored", "interrupted")
                fake.closed.append((status, detail))
                return FakeFuture(None, close_delay_s)

        self.ServiceClient = ServiceClient


# -- modal -------------------------------------------------------------------------------


class FakeStdin:
    def __init__(self, proc):
        self.proc = proc
        self.buffer = b""

    def write(self, data):
        self.buffer += data if isinstance(data, bytes) else data.encode()

    def drain(self):
        self.proc.stdin.write(self.buffer)
        self.proc.stdin.flush()
        self.buffer = b""


class FakeStream:
    """A ContainerProcess stdout/stderr: iterable (bytes when text=False) and readable."""

    def __init__(self, pipe, text):
        self.pipe = pipe
        self.text = text

    def __iter__(self):
        for line in iter(self.pipe.readline, b""):
            yield line.decode() if self.text else line

    def read(self):
        data = self.pipe.read()
        return data.decode() if self.text else data


class FakeProcess:
    """A ContainerProcess backed by a local subprocess in the sandbox's folder (so the real worker runs)."""

    def __init__(self, sandbox, argv, text):
        self.sandbox = sandbox
        local = [a.replace("/work/", sandbox.root + "/") for a in argv]
        if local[0] == "python3":
            local[0] = sys.executable
        self.proc = subprocess.Popen(
            local,
            cwd=sandbox.root,
            env={"PATH": os.defpath},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.stdin = FakeStdin(self.proc)
        self.stdout = FakeStream(self.proc.stdout, text)
        self.stderr = FakeStream(self.proc.stderr, text)

    def poll(self):
        if self.sandbox.timed_out:
            return -1
        return self.proc.poll()

    def wait(self):
        self.proc.wait()
        return self.poll()


class FakeFilesystem:
    def __init__(self, sandbox):
        self.sandbox = sandbox

    def write_bytes(self, data, remote_path):
        assert remote_path.startswith("/work/")
        self.sandbox.written.append(remote_path)
        local = os.path.join(self.sandbox.root, remote_path[len("/work/") :])
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "wb") as fh:
            fh.write(data)


class FakeImage:
    def __init__(self, fake, object_id, root=None):
        self.fake = fake
        self.object_id = object_id
        self.root = root  # a snapshot's files

    def build(self, app):
        binds(modal.Image.build, self, app)
        self.fake.built.append(self.object_id)
        return self


class FakeApp:
    def __init__(self, fake, name):
        self.fake = fake
        self.name = name
        self.app_id = f"ap-{len(fake.apps) + 1:04d}"
        self.stopped = 0

    def stop(self):
        binds(modal.App.stop, self)
        self.stopped += 1
        for sb in self.fake.sandboxes:
            if sb.app is self:
                sb.terminate()


class FakeSandbox:
    def __init__(self, fake, kwargs):
        self.fake = fake
        self.kwargs = kwargs
        self.app = kwargs.get("app")
        self.object_id = f"sb-{len(fake.sandboxes) + 1:04d}"
        self.root = tempfile.mkdtemp(prefix="fake-modal-")
        image = kwargs.get("image")
        if isinstance(image, FakeImage) and image.root:
            shutil.copytree(image.root, self.root, dirs_exist_ok=True)
        self.written = []
        self.terminated = 0
        self.timed_out = False
        self.processes = []
        self.filesystem = FakeFilesystem(self)
        if fake.expire_after_s is not None:
            threading.Timer(fake.expire_after_s, self._expire).start()

    @property
    def process(self):
        return self.processes[0] if self.processes else None

    def _expire(self):
        self.timed_out = True
        self._kill()

    def _kill(self):
        for p in self.processes:
            if p.proc.poll() is None:
                p.proc.kill()

    def exec(self, *argv, workdir=None, timeout=None, text=True):
        binds(modal.Sandbox.exec, self, *argv, workdir=workdir, timeout=timeout, text=text)
        if self.fake.fail_exec:
            raise RuntimeError("exec failed")
        if self.terminated:
            raise RuntimeError("the sandbox is terminated")
        process = FakeProcess(self, list(argv), text)
        self.processes.append(process)
        return process

    def poll(self):
        binds(modal.Sandbox.poll, self)
        return 137 if self.terminated else None

    def snapshot_filesystem(self):
        binds(modal.Sandbox.snapshot_filesystem, self)
        root = tempfile.mkdtemp(prefix="fake-modal-image-")
        shutil.copytree(self.root, root, dirs_exist_ok=True)
        image = FakeImage(self.fake, f"im-snap-{len(self.fake.images) + 1:04d}", root)
        self.fake.images[image.object_id] = image
        return image

    def terminate(self):
        binds(modal.Sandbox.terminate, self)
        self.terminated += 1
        self._kill()
        for p in self.processes:
            p.proc.wait()
            for stream in (p.proc.stdin, p.proc.stdout, p.proc.stderr):
                try:
                    stream.close()
                except OSError:
                    pass


class FakeModal:
    """Stands in for the `modal` module: App.lookup / App.stop, Image.debian_slim / build / from_id,
    Sandbox.create / from_id and the sandbox's own methods, each checked against modal 1.6's signatures."""

    def __init__(self, expire_after_s=None, fail_exec=False, fail_create=False, create_delay_s=0.0):
        self.expire_after_s = expire_after_s
        self.fail_exec = fail_exec
        self.sandboxes = []
        self.apps = []
        self.images = {}
        self.built = []
        fake = self

        class App:
            @staticmethod
            def lookup(name, create_if_missing=False):
                binds(modal.App.lookup, name, create_if_missing=create_if_missing)
                found = next((a for a in fake.apps if a.name == name or a.app_id == name), None)
                if found is None:
                    assert create_if_missing, f"no app {name}"
                    found = FakeApp(fake, name)
                    fake.apps.append(found)
                return found

        class Image:
            @staticmethod
            def debian_slim(python_version=None):
                binds(modal.Image.debian_slim, python_version=python_version)
                return FakeImage(fake, f"im-debian-{python_version}")

            @staticmethod
            def from_id(image_id):
                binds(modal.Image.from_id, None, image_id)
                return fake.images[image_id]

        class Sandbox:
            @staticmethod
            def create(**kwargs):
                binds(modal.Sandbox.create, **kwargs)
                if create_delay_s:
                    time.sleep(create_delay_s)
                if fail_create:
                    raise ConnectionError("no route to modal")
                sb = FakeSandbox(fake, kwargs)
                fake.sandboxes.append(sb)
                return sb

            @staticmethod
            def from_id(sandbox_id):
                binds(modal.Sandbox.from_id, sandbox_id)
                return next(sb for sb in fake.sandboxes if sb.object_id == sandbox_id)

        self.App, self.Image, self.Sandbox = App, Image, Sandbox


def mock_answer(prompt):
    """The scripted mock model's answer to a prompt rendered by FakeTokenizer (so a fake tinker plays a real run)."""
    import re

    from launchers._sampler_mock import MockSampler

    text = "".join(chr(t) for t in prompt.to_ints())
    parts = re.split(r"<(system|user|assistant)>", text)
    messages = [{"role": parts[i], "content": parts[i + 1]} for i in range(1, len(parts) - 1, 2)]
    messages = [m for m in messages if m["content"] or m["role"] != "assistant"]  # the generation prompt
    return MockSampler(invalid_per_mille=0).answer(messages, "fake")
