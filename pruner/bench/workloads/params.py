"""The three workloads' parameters, fixed before any run and documented in one table.

>>> WORKLOADS["tool_agent"].tool_call_rate
0.65
>>> sorted(WORKLOADS)
['plain_chat', 'rag_assistant', 'tool_agent']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Sizes (turns) the default benchmark runs.
SIZES: tuple[int, ...] = (50, 200, 500, 1000, 2000)


@dataclass(frozen=True)
class WorkloadParams:
    """What one synthetic workload does per turn. Every figure is a rate, never a count,
    so the amount of waste grows with the conversation.

    The first five fields are the issue's table; the rest are the dependency
    model shared by all three workloads and the knobs that decide which kinds of
    waste a re-run or re-retrieval produces.
    """

    name: str
    description: str
    docs_per_turn: int  # retrieved documents injected after each user message
    overlap_rate: float  # share of retrieved docs that re-retrieve an earlier chunk
    tool_call_rate: float  # probability that a turn makes tool calls
    repeat_call_rate: float  # probability that a tool call re-runs an earlier call (same arguments)
    tools: tuple[str, ...]  # tool families ("filesystem" = read_file / edit_file / write_file)
    # The reference's dependency model.
    fact_rate: float = 0.08  # a user states a new fact (DEFINE:key) in a turn
    back_ref_rate: float = 0.3  # a turn refers back to an open fact
    tool_fact_rate: float = 0.15  # a new tool result also defines a fact
    file_fact_rate: float = 0.5  # a file read for the first time holds a setting that defines a fact
    # How references and facts behave.
    paraphrase_rate: float = 0.25  # share of back-references with no tag ("which format did I mention?")
    fact_update_rate: float = 0.2  # share of user fact statements that change an open fact (supersession)
    close_after_ref_rate: float = 0.3  # a referenced fact stops being open
    assistant_ref_rate: float = 0.2  # share of back-references made by the assistant, not the user
    # How waste looks.
    near_duplicate_rate: float = 0.5  # share of re-retrievals that are near (not exact) copies
    same_turn_pair_rate: float = 0.08  # a tool call is issued twice, same arguments, same message
    data_change_rate: float = 0.3  # a re-run of sql / web_fetch returns changed data (a new version)
    max_calls_per_turn: int = 3

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tools"] = list(self.tools)
        return d


WORKLOADS: dict[str, WorkloadParams] = {
    "plain_chat": WorkloadParams(
        name="plain_chat", description="a plain chat with an occasional FAQ lookup",
        docs_per_turn=0, overlap_rate=0.0, tool_call_rate=0.05, repeat_call_rate=0.3,
        tools=("faq_lookup",)),
    "rag_assistant": WorkloadParams(
        name="rag_assistant", description="a support assistant answering from retrieved documents",
        docs_per_turn=3, overlap_rate=0.45, tool_call_rate=0.10, repeat_call_rate=0.4,
        tools=("document_search", "fetch_source")),
    "tool_agent": WorkloadParams(
        name="tool_agent", description="an agent using search, SQL, a calculator, files and the web",
        docs_per_turn=2, overlap_rate=0.35, tool_call_rate=0.65, repeat_call_rate=0.7,
        tools=("search", "sql", "calculator", "filesystem", "web_fetch")),
}


def params_table() -> str:
    """The workload table as Markdown (the README quotes it)."""
    rows = ["| workload | retrieved docs per turn | re-retrieval (overlap) rate | tool-call rate per turn "
            "| repeat-call rate | tools |", "|---|---|---|---|---|---|"]
    for p in WORKLOADS.values():
        rows.append(f"| {p.name} | {p.docs_per_turn} | {p.overlap_rate} | {p.tool_call_rate} | "
                    f"{p.repeat_call_rate} | {', '.join(p.tools)} |")
    return "\n".join(rows)
