"""Untrusted-content labelling (knowledge §10.4).

Retrieved text is data for the model, never instructions. Text that looks like it is trying
to steer a model (override phrases, tool-call or chat-template markup) is labelled so the
agent can see it; it is never dropped, rewritten or reordered, and labels never change scores.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lazyre import LazyPattern

TRUST_VALUES = ("repository", "artifact", "evidence")


@dataclass(frozen=True)
class LabelRule:
    """One row of the label table: a flag and the pattern that raises it.

    Every match contains one of ``needles``, so text without any skips the regex. A ``fold``
    row is case-insensitive: its lower-case pattern and needles are searched in the
    lower-cased text, which re scans several times faster than an IGNORECASE pattern. When
    every match starts with one of ``starts``, the pattern is tried only where one of them
    occurs (a search tries it at every position: ~12 µs over a 600-character chunk).
    """

    label: str
    pattern: LazyPattern
    needles: tuple[str, ...]
    fold: bool = False
    starts: tuple[str, ...] = ()

    def found(self, haystack: str) -> bool:
        """Whether the pattern matches somewhere in ``haystack``."""
        if not self.starts:
            return self.pattern.search(haystack) is not None
        match = self.pattern.match
        for word in self.starts:
            at = haystack.find(word)
            while at >= 0:
                if match(haystack, at) is not None:
                    return True
                at = haystack.find(word, at + 1)
        return False


def _any_of(*alternatives: str) -> LazyPattern:
    """One pattern for the alternatives, compiled when a text first holds one of its row's needles."""
    return LazyPattern("|".join(f"(?:{alt})" for alt in alternatives))


_VERB = r"ignore|disregard|forget"
_DET = r"all|any|the|your|my|these|those|every|of"
_EARLIER = r"previous|prior|above|earlier|preceding|former|original|initial|system"
_ORDERS = (
    r"instructions?|prompts?|directions?|directives?|rules|guidelines|guidance|commands?"
    r"|orders|constraints|programming|training|context"
)
# "You are now ..." that only describes a state ("you are now ready / logged in / on branch").
_STATE = (
    r"ready|able|done|finished|set|all\s+set|logged|signed|connected|authenticated|subscribed"
    r"|registered|on|at|in\s+the|inside|using|running|viewing|looking|back"
)

# Evaluated in this order; each label is reported at most once.
LABEL_RULES: tuple[LabelRule, ...] = (
    LabelRule(
        "instruction_override",
        _any_of(
            # ignore (all) (the|your) previous/prior/above/system instructions|rules|prompt ...
            rf"\b(?:{_VERB})\s+(?:(?:{_DET})\s+)*(?:{_EARLIER})\s+(?:{_ORDERS})\b",
            # forget your instructions, ignore all my rules
            rf"\b(?:{_VERB})\s+(?:all\s+(?:of\s+)?)?(?:your|my)\s+(?:{_ORDERS})\b",
            # disregard the above / ignore everything above / forget all of the above.
            rf"\b(?:{_VERB})\s+(?:all\s+(?:of\s+)?)?(?:the\s+|everything\s+)?above"
            rf"(?=\s*(?:$|[.,;:!\n]|and\b|then\b))",
            rf"\byou\s+are\s+now\b(?!\s+(?:{_STATE})\b)",
        ),
        needles=("ignore", "disregard", "forget", "now"),
        fold=True,
        starts=("ignore", "disregard", "forget", "you"),  # each alternative's first word
    ),
    LabelRule(
        "tool_call_markup",
        _any_of(
            r"</?(?:\w+:)?(?:function_calls|invoke|tool_use|tool_call|tool_result|function_call)\b",
            r"\"(?:tool_calls|function_call|tool_use)\"\s*:",
        ),
        needles=("function_call", "invoke", "tool_use", "tool_call", "tool_result"),
    ),
    LabelRule(
        "role_markup",
        _any_of(
            r"<\|(?:im_start|im_end|im_sep|system|user|assistant|start_header_id|end_header_id"
            r"|eot_id)\|>",
            r"\[/?INST\]",
            r"<</?SYS>>",
            r"<(?:start|end)_of_turn>",
        ),
        needles=("<|", "INST]", "SYS>>", "_of_turn>"),
    ),
)


def flags_for(text: str) -> list[str]:
    """Labels of ``text`` (the complete masked text, not an excerpt), in table order."""
    lowered = text.lower()
    flags = []
    for rule in LABEL_RULES:
        haystack = lowered if rule.fold else text
        if any(n in haystack for n in rule.needles) and rule.found(haystack):
            flags.append(rule.label)
    return flags
