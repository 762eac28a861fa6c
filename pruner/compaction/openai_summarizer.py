"""An LLM summariser for any OpenAI-compatible Chat Completions endpoint.

The base URL, model and key come from the arguments or from the standard
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` variables. Each attempt has a deadline
on the whole request (connecting, sending, every byte of the answer), not only
on each read, so a server that sends one byte a second cannot hold a call
longer than the timeout. 429, 5xx, timeouts and refused connections are retried
a bounded number of times with exponential backoff (honouring a short
``Retry-After``). The answer is bounded by ``max_output_tokens``: its body is read
only up to the bytes that many tokens can take, and an answer longer than the
bound (by the server's own count, or twice the bound by ours) is refused, never
kept; it must contain every required heading. Every failure is a
``SummarizerError`` whose message names the cause and never contains the key
(it is redacted from anything a server sends back, too, whatever its length).

>>> s = OpenAISummarizer(base_url="http://127.0.0.1:9/v1", model="m", api_key="k")
>>> s.name, "k" in repr(s)
('openai/m', False)
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigurationError, SummarizerError
from ..jsonio import JsonProblem, loads_json
from .base import SummaryTask
from .sections import missing_sections

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
log = logging.getLogger(__name__)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: An answer's body may hold this much besides its text (the JSON around it) ...
ANSWER_OVERHEAD_BYTES = 1 << 20
#: ... plus this many bytes per output token: longer than any token's text even written as JSON escapes.
ANSWER_BYTES_PER_TOKEN = 64
#: Our count (o200k_base) of an answer may exceed the endpoint's by this factor before it is refused:
#: tokenisers differ, and an endpoint that ignores max_tokens sends far more than this.
OUR_COUNT_TOLERANCE = 2


class _AnswerTooLong(Exception):
    pass


def check_base_url(url: Any) -> str:
    """``url`` if it is an absolute http(s) URL with a host, else ``ConfigurationError`` saying why.

    >>> check_base_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    >>> check_base_url("::not a url::")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pruner.errors.ConfigurationError: the base URL '::not a url::' is not an http:// or https:// address ...
    """
    example = "such as https://api.openai.com/v1"
    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError(f"the base URL is empty; give an http:// or https:// address, {example}")
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname \
            or any(ch.isspace() or ord(ch) < 32 for ch in url.strip()):
        shown = repr(display_url(url) if parts is not None and parts.hostname else url[:80])
        raise ConfigurationError(f"the base URL {shown} is not an http:// or https:// address with a host, {example}")
    del port
    return url.strip()


def _is_timeout(exc: BaseException) -> bool:
    """Whether the HTTP layer gave up waiting (httpx's timeouts, raised while the body streams)."""
    return any("Timeout" in type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None)


def display_url(url: str) -> str:
    """``url`` without user info, query or fragment (they may hold secrets)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


#: One request's outcome: (a fatal error, (a retry's cause, the exception that may say how long to wait),
#: the answer's JSON); exactly one is set.
_Outcome = tuple["SummarizerError | None", "tuple[str, Exception | None] | None", "Mapping[str, Any] | None"]


class OpenAISummarizer:
    """Summaries from a Chat Completions model through the official ``openai`` client.

    Keyword-only options: ``base_url`` and ``api_key`` (default: the
    ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` variables), ``model``, ``timeout``
    (seconds per attempt), ``max_retries`` (extra attempts after the first),
    ``max_output_tokens``, ``backoff_seconds`` (first wait; doubles each retry,
    at most ``max_backoff_seconds``) and ``temperature``. ``key_name`` says where
    the key came from, for error messages (default: ``OPENAI_API_KEY`` when the
    key is read from it, else "the API key"; the CLI passes the variable it read).
    An unusable setting (a base URL that is not an http(s) address, a timeout
    that is not a positive finite number) is a ``ConfigurationError`` at once.
    The longest a ``summarize`` call can take is about
    ``max_call_seconds``: every attempt's timeout plus the waits between them.
    ``cancel`` (a ``threading.Event``) ends a call early: once it is set, the
    request in flight is abandoned and ``summarize`` raises a
    ``SummarizerError`` saying it was cancelled (``compact(on_error="fallback")``
    then shows the offline summary).
    """

    def __init__(self, *, base_url: str | None = None, model: str = DEFAULT_MODEL, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, max_output_tokens: int = 4096,
                 backoff_seconds: float = 1.0, max_backoff_seconds: float = 20.0,
                 temperature: float | None = 0.0, key_name: str | None = None,
                 cancel: threading.Event | None = None):
        for name, value in (("timeout", timeout), ("backoff_seconds", backoff_seconds),
                            ("max_backoff_seconds", max_backoff_seconds)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value < 0 or (name == "timeout" and value == 0):
                least = "positive" if name == "timeout" else "non-negative"
                raise ConfigurationError(f"{name} is {value!r}; it must be a {least} finite number of seconds")
        for count_name, count, fewest in (("max_retries", max_retries, 0), ("max_output_tokens", max_output_tokens, 1)):
            if isinstance(count, bool) or not isinstance(count, int) or count < fewest:
                raise ConfigurationError(f"{count_name} is {count!r}; it must be a whole number of at least {fewest}")
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError("the model name is empty; give the name of a model the endpoint serves")
        self.model = model
        self.base_url = check_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_output_tokens = int(max_output_tokens)
        self.backoff_seconds = float(backoff_seconds)
        self.max_backoff_seconds = float(max_backoff_seconds)
        self.temperature = temperature
        self.__key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.key_name = key_name or ("OPENAI_API_KEY" if api_key is None else None)
        self.cancel = cancel

    @property
    def max_call_seconds(self) -> float:
        """The longest one request can take, retries and waits included (a bound for a front end to show)."""
        waits: float = sum(min(self.backoff_seconds * 2 ** a, self.max_backoff_seconds)
                           for a in range(self.max_retries))
        return (1 + self.max_retries) * self.timeout + waits

    @property
    def name(self) -> str:
        return f"openai/{self.model}"

    def __repr__(self) -> str:  # never shows the key
        return (f"OpenAISummarizer(base_url={display_url(self.base_url)!r}, model={self.model!r}, "
                f"timeout={self.timeout}, max_retries={self.max_retries})")

    # -- helpers -----------------------------------------------------------------
    def _redact(self, text: str) -> str:
        # Every key, whatever its length: a short one makes text that holds its characters hard to
        # read, which is better than the key on a screen or in a file.
        key = self.__key
        if key:
            text = text.replace(key, "[redacted]")
        return text

    def _where(self) -> str:
        return f"{display_url(self.base_url)} (model {self.model})"

    def _server_says(self, exc: Any) -> str:
        body = getattr(exc, "body", None)
        message = None
        if isinstance(body, Mapping):
            err = body.get("error", body)
            message = err.get("message") if isinstance(err, Mapping) else err
        if not isinstance(message, str) or not message.strip():
            return ""
        # The server is not trusted: its words are one line, with no control characters left to act.
        return ": " + _CONTROLS.sub("?", self._redact(" ".join(message.split())))[:300]

    def _delay(self, attempt: int, exc: Any) -> float:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        try:
            if "retry-after-ms" in headers:
                hinted = float(headers["retry-after-ms"]) / 1000
            elif "retry-after" in headers:
                hinted = float(headers["retry-after"])
            else:
                hinted = None
        except (TypeError, ValueError):
            hinted = None
        if hinted is not None and 0 <= hinted <= self.max_backoff_seconds:
            return hinted
        delay: float = min(self.backoff_seconds * (2 ** attempt), self.max_backoff_seconds)  # int ** int is Any
        return delay

    @property
    def max_answer_bytes(self) -> int:
        """The most bytes of an answer's body read: what ``max_output_tokens`` tokens can take as JSON."""
        return ANSWER_OVERHEAD_BYTES + ANSWER_BYTES_PER_TOKEN * self.max_output_tokens

    def _read_answer(self, raw: Any) -> Any:
        """The answer's JSON, read only up to ``max_answer_bytes`` (a huge answer is never held)."""
        chunks, size = [], 0
        for chunk in raw.iter_bytes():
            size += len(chunk)
            if size > self.max_answer_bytes:
                raise _AnswerTooLong(f"{self._where()} sent an answer of more than {self.max_answer_bytes:,} bytes, "
                                     f"longer than max_output_tokens {self.max_output_tokens:,} tokens can be; "
                                     "refused (the endpoint ignores max_tokens)")
            chunks.append(chunk)
        try:
            return loads_json(b"".join(chunks).decode("utf-8"))
        except (UnicodeDecodeError, JsonProblem, RecursionError):
            return None

    def _attempt(self, client: Any, task: SummaryTask, openai: Any) -> _Outcome:
        """One request: ``(fatal error, (retry cause, exception), answer JSON)``, one of them set."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": task.request.as_messages(),
                                  "max_tokens": self.max_output_tokens}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        fatal: str | None = None
        retry: tuple[str, Exception | None] | None = None
        try:
            with client.chat.completions.with_streaming_response.create(**kwargs) as raw:
                answer = self._read_answer(raw)
            if not isinstance(answer, Mapping):
                fatal = f"{self._where()} answered with something that is not a Chat Completions object"
            else:
                return None, None, answer
        except _AnswerTooLong as exc:
            fatal = str(exc)
        except openai.AuthenticationError:
            fatal = (f"{self._where()} rejected the API key (HTTP 401): check "
                     + (f"the key in {self.key_name}" if self.key_name else "the API key"))
        except openai.PermissionDeniedError as exc:
            fatal = f"{self._where()} refused access (HTTP 403){self._server_says(exc)}"
        except openai.NotFoundError as exc:
            fatal = (f"{self._where()} answered HTTP 404: check the base URL and the model name"
                     f"{self._server_says(exc)}")
        except openai.APITimeoutError:
            retry = (f"no answer within the {self.timeout:g} s timeout", None)
        except openai.APIConnectionError:
            retry = ("cannot connect (is the server running and the base URL right?)", None)
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status != 429 and status < 500:
                fatal = f"{self._where()} answered HTTP {status}{self._server_says(exc)}"
            else:
                what = "rate limited (HTTP 429)" if status == 429 else f"server error (HTTP {status})"
                retry = (what + self._server_says(exc), exc)
        except openai.OpenAIError as exc:
            fatal = f"{self._where()}: the request failed ({type(exc).__name__})"
        except Exception as exc:  # the HTTP layer's own errors (a URL it cannot use, a connection cut, ...)
            if _is_timeout(exc):
                retry = (f"no answer within the {self.timeout:g} s timeout", None)
            else:
                fatal = f"{self._where()}: the request could not be sent ({type(exc).__name__})"
        return (SummarizerError(fatal) if fatal else None), retry, None

    def _cancelled(self) -> SummarizerError:
        return SummarizerError(f"{self._where()}: the request was cancelled")

    def _bounded_attempt(self, openai: Any, task: SummaryTask) -> _Outcome | None:
        """``_attempt``'s outcome within ``timeout`` seconds for the whole request; None when ``cancel``
        was set first.

        The request runs in a helper thread with its own client; this thread waits for the answer,
        the deadline or the cancel, whichever comes first. On the deadline or the cancel the client
        is closed under the abandoned request (its connection goes), and the outcome is a timeout
        to retry, or None.
        """
        try:
            client = openai.OpenAI(api_key=self.__key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
        except Exception as exc:  # the HTTP layer refuses the URL (set after the constructor's check)
            return SummarizerError(f"{self._where()}: the client cannot use this base URL "
                                   f"({type(exc).__name__})"), None, None
        if self.cancel is not None and self.cancel.is_set():
            client.close()
            return None
        outcome: list[_Outcome] = []
        worker = threading.Thread(target=lambda: outcome.append(self._attempt(client, task, openai)),
                                  name="pruner-summarizer-request", daemon=True)
        deadline = time.monotonic() + self.timeout
        worker.start()
        while worker.is_alive() and not (self.cancel is not None and self.cancel.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            worker.join(min(0.05, left))
        if outcome:
            client.close()
            return outcome[0]
        client.close()  # abandons the request in flight: its connection is closed under it
        if self.cancel is not None and self.cancel.is_set():
            return None
        return None, (f"no complete answer within the {self.timeout:g} s timeout (for the whole request)", None), None

    # -- the call ----------------------------------------------------------------
    def complete(self, task: SummaryTask) -> tuple[str, str | None]:
        """``(answer text, finish reason)`` for ``task.request``; retries as configured."""
        try:
            import openai  # imported here: the offline path never needs it
        except ImportError:
            raise SummarizerError("the OpenAI summariser needs the openai package, which is not installed: "
                                  "pip install 'pruner[openai]' (or use the offline summariser)") from None

        if not self.__key:
            where = f"the {self.key_name} environment variable" if self.key_name else "a key"
            raise SummarizerError(f"no API key for the OpenAI summariser: set {where} "
                                  "(or use the offline summariser)")
        attempts = 1 + self.max_retries
        last_cause = ""
        for attempt in range(attempts):
            # Errors are raised outside the ``except`` blocks, so they carry no chained
            # client exception (whose text may quote the key back from the server).
            outcome = self._bounded_attempt(openai, task)
            if outcome is None:
                raise self._cancelled()
            fatal, retry_exc, answer = outcome
            if fatal is not None:
                raise fatal
            if answer is not None:
                break
            assert retry_exc is not None  # neither fatal nor answered: a cause to retry (_Outcome)
            last_cause = retry_exc[0]
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_exc[1])
                log.info("summariser attempt %d of %d failed (%s); retrying in %.2f s",
                         attempt + 1, attempts, last_cause, delay)
                if self.cancel is None:
                    time.sleep(delay)
                elif self.cancel.wait(delay):
                    raise self._cancelled()
        else:
            raise SummarizerError(f"{self._where()}: gave up after {attempts} attempt"
                                  f"{'s' if attempts > 1 else ''}; last: {last_cause}")
        return self._answer_text(answer)

    def _answer_text(self, answer: Mapping[str, Any]) -> tuple[str, str | None]:
        """``(text, finish reason)`` of a Chat Completions answer; refused when longer than the bound."""
        choices = answer.get("choices")
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) else None
        if first is None:
            raise SummarizerError(f"{self._where()} returned an answer without choices")
        message = first.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        text = content if isinstance(content, str) else ""
        finish = first.get("finish_reason") if isinstance(first.get("finish_reason"), str) else None
        usage = answer.get("usage")
        said = usage.get("completion_tokens") if isinstance(usage, Mapping) else None
        if isinstance(said, int) and not isinstance(said, bool) and said > self.max_output_tokens:
            raise SummarizerError(f"{self._where()} returned {said:,} output tokens (its own count), over "
                                  f"max_output_tokens {self.max_output_tokens:,}; refused")
        if len(text) > self.max_output_tokens:  # only then can the text be over the bound: count it
            from ..tokens import get_counter
            ours = get_counter().count(text)
            if ours > OUR_COUNT_TOLERANCE * self.max_output_tokens:
                raise SummarizerError(f"{self._where()} returned {ours:,} output tokens (our count), over "
                                      f"max_output_tokens {self.max_output_tokens:,}; refused")
        return text, finish

    def summarize(self, task: SummaryTask) -> str:
        text, finish = self.complete(task)
        if not text.strip():
            raise SummarizerError(f"{self._where()} returned an empty summary")
        missing = missing_sections(text, task.required_sections)
        if missing:
            cut = " (the answer was cut at max_output_tokens; raise it)" if finish == "length" else ""
            raise SummarizerError(f"{self._where()} returned a summary without the required "
                                  f"section{'s' if len(missing) > 1 else ''} {', '.join(missing)}{cut}")
        return self._redact(text.strip()) + "\n"
