"""Fakes of exactly the tinker and modal surfaces the adapters call."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import tinker.types


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


class FakeSequence:
    def __init__(self, tokens):
        self.tokens = tokens
        self.stop_reason = "stop"


class FakeResponse:
    def __init__(self, tokens):
        self.sequences = [FakeSequence(tokens)]


class FakeSamplingClient:
    def __init__(self, answer, delay_s):
        self.answer = answer
        self.delay_s = delay_s
        self.requests = []
        self.futures = []

    def get_tokenizer(self):
        return FakeTokenizer()

    def sample(self, prompt, num_samples, sampling_params):
        self.requests.append((prompt, num_samples, sampling_params))
        future = FakeFuture(FakeResponse([ord(c) for c in self.answer]), self.delay_s)
        self.futures.append(future)
        return future


class FakeTinker:
    """Stands in for the `tinker` module: ServiceClient and the real `types`."""

    types = tinker.types

    def __init__(self, answer='{"tool": "headroom", "arguments": {}}', delay_s=0.0):
        self.client = FakeSamplingClient(answer, delay_s)
        self.created = []
        fake = self

        class ServiceClient:
            def __init__(self):
                fake.created.append(("service",))

            def create_sampling_client(self, base_model, retry_config):
                fake.created.append(("sampling", base_model, retry_config.progress_timeout))
                return FakeFuture(fake.client)
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


class FakeProcess:
    """A ContainerProcess backed by a local subprocess (so the real worker runs)."""

    def __init__(self, sandbox, argv, workdir):
        self.sandbox = sandbox
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", *argv[3:]], cwd=sandbox.root,
                                     env={"PATH": os.defpath}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.stdin = FakeStdin(self.proc)
        self.stdout = iter(self.proc.stdout.readline, b"")

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
        local = os.path.join(self.sandbox.root, remote_path[len("/work/"):])
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "wb") as fh:
            fh.write(data)


class FakeSandbox:
    def __init__(self, fake, kwargs):
        self.kwargs = kwargs
        self.root = tempfile.mkdtemp(prefix="fake-modal-")
        self.written = []
        self.terminated = 0
        self.timed_out = False
        self.process = None
        self.filesystem = FakeFilesystem(self)
        self.fail_exec = fake.fail_exec
        if fake.expire_after_s is not None:
            threading.Timer(fake.expire_after_s, self._expire).start()

    def _expire(self):
        self.timed_out = True
        self._kill()

    def _kill(self):
        if self.process is not None and self.process.proc.poll() is None:
            self.process.proc.kill()

    def exec(self, *argv, workdir=None, timeout=None, text=True):
        if self.fail_exec:
            raise RuntimeError("exec failed")
        assert argv[:4] == ("python3", "-I", "-S", "-B") and text is False
        self.process = FakeProcess(self, ["python3", "-I", "-S", os.path.join(self.root, "worker.py")], workdir)
        return self.process

    def terminate(self):
        self.terminated += 1
        self._kill()
        if self.process is not None:
            self.process.proc.wait()
            for stream in (self.process.proc.stdin, self.process.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)


class FakeModal:
    """Stands in for the `modal` module: App.lookup, Image.debian_slim, Sandbox.create."""

    def __init__(self, expire_after_s=None, fail_exec=False, fail_create=False):
        self.expire_after_s = expire_after_s
        self.fail_exec = fail_exec
        self.sandboxes = []
        fake = self

        class App:
            @staticmethod
            def lookup(name, create_if_missing):
                return ("app", name, create_if_missing)

        class Image:
            @staticmethod
            def debian_slim(python_version):
                return ("image", python_version)

        class Sandbox:
            @staticmethod
            def create(**kwargs):
                if fail_create:
                    raise ConnectionError("no route to modal")
                sb = FakeSandbox(fake, kwargs)
                fake.sandboxes.append(sb)
                return sb
        self.App, self.Image, self.Sandbox = App, Image, Sandbox
