"""The default demo continued: the history the Guide's compaction step compacts when the demo is open.

The demo (``sample_sessions/native_demo.jsonl``) is 25 short, fact-dense messages, written so that every
pruning status appears once. After pruning they are about 530 tokens, and a summary that keeps their
facts (its headings, its note to the model, the facts themselves) is about as long: compacting the
demo alone makes its context *bigger*. Compaction is for long histories, so on the demo the Guide's
compaction step compacts the same support chat continued for six more turns, the way such chats grow:
bulky tool results (stock tables, a tracking log) and a long policy document. These messages are
hand-written like the demo itself; every figure the step shows is computed from them by the library.

>>> from dashboard import loading
>>> demo = loading.load_sample(DEMO_SAMPLE)
>>> longer = continued(demo)
>>> len(longer.session.messages) - len(demo.session.messages) == len(CONTINUATION)
True
"""

from __future__ import annotations

import json
from dataclasses import replace

from pruner.formats import loads_all

from ..loading import DEFAULT_SAMPLE, SAMPLES_DIR, LoadedSession

DEMO_SAMPLE = DEFAULT_SAMPLE


def _call(cid: str, name: str, **arguments) -> list[dict]:
    return [{"id": cid, "name": name, "arguments": arguments}]


_STOCK = "\n".join(
    ["store,size,colour,in_stock,reserved,next_delivery"]
    + [f"{store},{size},{colour},{(i * 7 + j * 3) % 9},{(i + j) % 3},2026-12-{10 + (i + j) % 15:02d}"
       for i, store in enumerate((
           "Denver Union Station", "Denver Cherry Creek", "Boulder Pearl St", "Fort Collins Old Town",
           "Salt Lake Gateway", "Online warehouse"))
       for j, (size, colour) in enumerate((("S", "slate"), ("M", "slate"), ("L", "slate"), ("XL", "slate"),
                                           ("M", "moss"), ("L", "moss"), ("XL", "moss")))])

_TRACKING = "\n".join(
    f"2026-11-{day:02d} {hour:02d}:{minute:02d} {place}: {event}"
    for day, hour, minute, place, event in (
        (20, 9, 12, "Reno NV", "Shipment information sent to UPS"),
        (20, 18, 40, "Reno NV", "Picked up by UPS"),
        (20, 23, 5, "Sparks NV", "Departed from facility"),
        (21, 6, 30, "Salt Lake City UT", "Arrived at facility"),
        (21, 11, 2, "Salt Lake City UT", "Departed from facility"),
        (22, 4, 55, "Denver CO", "Arrived at facility"),
        (22, 8, 10, "Denver CO", "Out for delivery"),
        (22, 14, 31, "Denver CO", "Delivery attempted: customer not available; notice left"),
        (23, 8, 5, "Denver CO", "Out for delivery"),
        (23, 12, 47, "Denver CO", "Delivered, front porch; signed by DREYES"),
    ))

_SHIPPING = (
    "Acme Outfitters shipping and exchanges. Standard shipping takes 3 to 6 business days and is free on orders "
    "over 75 dollars; express shipping takes 1 to 2 business days and costs 18 dollars. Orders placed before 2 pm "
    "Mountain Time ship the same day. Exchanges for another size or colour of the same item are free for everyone: "
    "the replacement ships when the warehouse scans the returned parcel, or at once when the customer keeps a card "
    "on file for the difference. An exchange resets the 30-day return window from the replacement's delivery. "
    "Items bought in a store can be exchanged in any store or by mail. Gift receipts allow exchanges and store "
    "credit only. Parcels that cannot be delivered after three attempts go back to the warehouse and are refunded "
    "less the shipping cost. Holiday orders placed from 15 November to 24 December can be returned until 15 January.")

#: Turns 7–12 of the demo's support chat, as native JSON Lines records.
CONTINUATION: tuple[dict, ...] = (
    {"id": "m26", "role": "user", "content": "The jacket fits small. Can I exchange it for a size L, ideally in "
     "slate? I live in Denver.", "turn": 7},
    {"id": "m27", "role": "assistant", "content": "", "turn": 7,
     "tool_calls": _call("call_13", "check_stock", sku="ALP-SHELL", sizes=["M", "L", "XL"])},
    {"id": "m28", "role": "tool", "content": _STOCK, "turn": 7, "tool_call_id": "call_13", "tool_name": "check_stock"},
    {"id": "m29", "role": "assistant", "content": "Size L in slate is in stock at Denver Union Station and in the "
     "online warehouse, so an exchange is possible.", "turn": 7},
    {"id": "m30", "role": "user", "content": "How do exchanges work, and how fast would the new one ship?",
     "turn": 8},
    {"id": "m31", "role": "retrieved_doc", "content": _SHIPPING, "turn": 8},
    {"id": "m32", "role": "assistant", "content": "Exchanges are free. The size L ships when the warehouse scans "
     "your return, or at once if you keep a card on file; standard shipping is free on this order.", "turn": 8},
    {"id": "m33", "role": "user", "content": "The parcel said there was a failed delivery. When did it actually "
     "arrive?", "turn": 9},
    {"id": "m34", "role": "assistant", "content": "", "turn": 9,
     "tool_calls": _call("call_14", "track_parcel", tracking="1Z999AA10123456784")},
    {"id": "m35", "role": "tool", "content": _TRACKING, "turn": 9, "tool_call_id": "call_14",
     "tool_name": "track_parcel"},
    {"id": "m36", "role": "assistant", "content": "UPS tried on 22 November, then delivered it on 23 November at "
     "12:47, signed by DREYES. Your 30-day window runs to 23 December.", "turn": 9},
    {"id": "m37", "role": "user", "content": "Great. Please open the exchange, size L slate, and keep my card on "
     "file so it ships now.", "turn": 10},
    {"id": "m38", "role": "assistant", "content": "", "turn": 10,
     "tool_calls": _call("call_15", "create_exchange", order_id="A-1042", sku="ALP-SHELL", size="L",
                         colour="slate", ship_now=True)},
    {"id": "m39", "role": "tool", "content": "Exchange EX-5531 created for order A-1042. Return: 1 x Alpine shell "
     "jacket (size M). Replacement: 1 x Alpine shell jacket (size L, slate), order A-1107, ships 2026-12-08 by UPS "
     "standard. Card on file: Visa ending 4242, 0.00 USD charged now, authorised up to 189.00 USD if the return is "
     "not scanned by 2026-12-22. Return label: https://labels.example/EX-5531.pdf (prepaid, UPS drop-off).",
     "turn": 10, "tool_call_id": "call_15", "tool_name": "create_exchange"},
    {"id": "m40", "role": "assistant", "content": "Done: exchange EX-5531. The size L slate jacket ships on "
     "8 December as order A-1107; print the prepaid label and drop the size M at any UPS point by 22 December.",
     "turn": 10},
    {"id": "m41", "role": "user", "content": "Can you add that to my notes too?", "turn": 11},
    {"id": "m42", "role": "assistant", "content": "", "turn": 11,
     "tool_calls": _call("call_16", "write_file", path="notes/dana.md",
                         content="# Dana Reyes\n- member since 2021\n- prefers email contact\n"
                                 "- open ticket: exchange EX-5531 (A-1042 size M -> A-1107 size L slate)\n")},
    {"id": "m43", "role": "tool", "content": "Wrote 121 bytes to notes/dana.md", "turn": 11,
     "tool_call_id": "call_16", "tool_name": "write_file"},
    {"id": "m44", "role": "assistant", "content": "Your notes now list the open exchange EX-5531.", "turn": 11},
    {"id": "m45", "role": "user", "content": "Last thing: show the exchange as a table, the way I like it.",
     "turn": 12},
    {"id": "m46", "role": "assistant", "content": "exchange,returned,replacement,ships,return_by\nEX-5531,A-1042 "
     "Alpine shell jacket M,A-1107 Alpine shell jacket L slate,2026-12-08,2026-12-22", "turn": 12},
)


def is_demo(loaded: LoadedSession) -> bool:
    """Whether ``loaded`` is the default demo as shipped (a sample, not an upload of another file)."""
    return loaded.origin == "sample" and loaded.file == DEMO_SAMPLE and loaded.dialogue is None


def continued(loaded: LoadedSession) -> LoadedSession:
    """The demo file followed by ``CONTINUATION``, as a session of its own (its own cache key and label)."""
    text = (SAMPLES_DIR / DEMO_SAMPLE).read_text(encoding="utf-8").rstrip("\n") + "\n" + "\n".join(
        json.dumps(r) for r in CONTINUATION) + "\n"
    session = loads_all(text, file=DEMO_SAMPLE, format="native")[0]
    return replace(loaded, key=f"{loaded.key}:continued", label=f"{loaded.label}, continued for six more turns",
                   session=session)
