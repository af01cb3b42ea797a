"""Surface coverage: the sentences of a tool's agent-visible surfaces, and which of them
some clause of its contract quotes.

What counts as a sentence is decided per surface:
- **docstring** (the text the model is shown as the function doc): every reST field
  (`:param x: ...`, `:returns: ...`) and every Google-style entry under `Args:`,
  `Returns:`, `Raises:` is one block, the section headings themselves are not sentences,
  and the remaining prose is split at `.`, `!` or `?` followed by whitespace. A block is
  split the same way, so a field with two sentences counts two.
- **policy** (tau2's policy file): the lines that name the tool (its name, or its name with
  spaces for underscores, any case; Markdown headings left out), split into sentences like
  prose.
- **function_doc** (a JSON function description the model is shown instead of the
  docstring, when the adapter has `function_doc(tool)` or `func_docs()`, as BFCL's does):
  its `description` (from `Tool description:` on, when it has that marker) and each
  parameter's and response field's `description`, split into sentences like prose.

A sentence is covered when a clause's quote (any clause: pre, eff, frame, arg, inv, obs,
success, reset, whatever surface it names) contains it, or when one sentence of the quote
is contained in it. Whitespace runs compare equal, as in provenance checks.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.contracts.model import CLAUSE_PREFIXES, Contract

# A sentence ends at . ! ? followed by whitespace; "e.g. x" and "i.e. x" do not end one.
_SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+")
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples?):\s*$")
_FIELD = re.compile(r"^:(param|parameter|arg|type|returns?|rtype|raises?)\b[^:]*:")
_ENTRY = re.compile(r"^[A-Za-z_][\w.]*(\s*\([^)]*\))?:\s")  # `name (type): text` under Args
TOOL_MARKER = "Tool description:"
MIN_PIECE = 4  # a quote piece shorter than this ("ok.") would cover sentences by accident


@dataclass(frozen=True)
class Sentence:
    surface: str
    text: str


def normalise(text: str) -> str:
    return " ".join(text.split())


def split_sentences(text: str) -> list[str]:
    return [s for s in (normalise(p) for p in _SENTENCE_END.split(normalise(text))) if s]


def docstring_sentences(doc: str) -> list[str]:
    """The sentences of a docstring under the rule in the module docstring."""
    blocks: list[list[str]] = [[]]
    in_section = False
    for raw in doc.splitlines():
        line = raw.strip()
        if not line:
            blocks.append([])
            continue
        if _SECTION.match(line):
            in_section = True
            blocks.append([])
            continue
        if _FIELD.match(line) or (in_section and _ENTRY.match(line)):
            blocks.append([line])
            continue
        blocks[-1].append(line)
    return [s for block in blocks if block for s in split_sentences(" ".join(block))]


def function_docstring(file: Path, function: str) -> str | None:
    """The docstring of `function` in `file`, or of the first function nested in it when it
    has none (inspect's `@tool` factories put the model's text on the inner `execute`)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            doc = ast.get_docstring(node, clean=True)
            if doc:
                return doc
            for inner in ast.walk(node):
                if inner is not node and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    doc = ast.get_docstring(inner, clean=True)
                    if doc:
                        return doc
    return None


def docstring_files(adapter: Any, contract: Contract) -> list[Path]:
    """Where the model-visible docstring of a tool lives: tau2's `@tool` wrappers in the
    domain's tools.py / user_tools.py (the contract's source is the environment method,
    whose docstring the model never sees); otherwise the tool's own source file."""
    root = Path(adapter.source_root())
    domain = getattr(adapter, "domain", None)
    if adapter.name.startswith("tau2-") and domain:
        folder = root / "inspect_evals" / "tau2" / domain
        return [folder / "tools.py", folder / "user_tools.py"]
    return [root / contract.source.file]


def policy_sentences(adapter: Any, tool: str) -> list[str]:
    """Sentences of the policy lines that name the tool (adapters with `policy_file()`)."""
    policy = getattr(adapter, "policy_file", None)
    if policy is None:
        return []
    path = Path(adapter.source_root()) / policy()
    names = (tool.lower(), tool.replace("_", " ").lower())
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        s for line in lines if any(n in line.lower() for n in names) for s in split_sentences(line)
    ]


def function_doc(adapter: Any, tool: str) -> dict[str, Any] | None:
    """The JSON function description of a tool: `function_doc(tool)` or `func_docs()[tool]`
    (BFCL), when the adapter has either."""
    hook = getattr(adapter, "function_doc", None)
    if hook is not None:
        doc = hook(tool)
        return json.loads(doc) if isinstance(doc, str) else doc
    docs = getattr(adapter, "func_docs", None)
    return None if docs is None else docs().get(tool)


def function_doc_sentences(doc: dict[str, Any]) -> list[str]:
    """Sentences of a function description: its description from `Tool description:` on
    when it has that marker (BFCL puts one paragraph about the whole class before it), and
    the description of each parameter and each response field."""
    description = str(doc.get("description", ""))
    texts = [description.split(TOOL_MARKER, 1)[1] if TOOL_MARKER in description else description]
    for section in ("parameters", "response"):
        properties = (doc.get(section) or {}).get("properties", {})
        texts += [str(p.get("description", "")) for p in properties.values() if isinstance(p, dict)]
    return [s for t in texts if t.strip() for s in split_sentences(t)]


def surface_sentences(adapter: Any, contract: Contract) -> list[Sentence]:
    """Every sentence of the tool's agent-visible surfaces, in surface order, deduplicated.
    A tool with a function description is shown that, not its docstring."""
    described = function_doc(adapter, contract.tool)
    found: list[Sentence] = []
    if described is not None:
        found += [Sentence("function_doc", s) for s in function_doc_sentences(described)]
    else:
        doc = None
        for file in docstring_files(adapter, contract):
            if file.exists():
                doc = function_docstring(file, contract.tool)
                if doc:
                    break
        found += [Sentence("docstring", s) for s in docstring_sentences(doc or "")]
    found += [Sentence("policy", s) for s in policy_sentences(adapter, contract.tool)]
    return list(dict.fromkeys(found))


def clause_quotes(contract: Contract) -> list[str]:
    """Every provenance quote of the contract, success and reset included."""
    cited = [c for field in CLAUSE_PREFIXES for c in getattr(contract, field)]
    cited += [contract.success, *([contract.reset] if contract.reset else [])]
    return [normalise(c.provenance.quote) for c in cited if c.provenance is not None]


def covered(sentence: str, quotes: list[str]) -> bool:
    text = normalise(sentence)
    for quote in quotes:
        if text in quote:
            return True
        if any(len(p) >= MIN_PIECE and p in text for p in split_sentences(quote)):
            return True
    return False
