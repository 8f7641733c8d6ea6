"""python/iteragpu/_iteragpu.pyi against the compiled iteragpu._iteragpu, both ways.

Every function, class, method, property and attribute of the module is in the stub, and
everything the stub declares is in the module, of the same kind (method, static method,
property, class attribute, exception base). For every function and method, the parameters'
names and order, which are positional-only or keyword-only, and which have a default are
those of the signature pybind11 writes on the first line of its __doc__
("name(self: X, a: int, b: str = '1') -> Y"; "1. name(...)" per overload, which the stub
declares with @overload in the same order). Types are not compared: pybind11 names C++
conversions ("handle", "object"), the stub the Python types they accept.

Left out of the module side: dunders of every module or class (__doc__, __module__, ...), a
class's __init__ slot when no constructor is bound, and __repr__, __str__, __getstate__ and
__setstate__, which a stub need not repeat (checked when it does). Stub-only: type aliases
(`Number = Union[...]`) and private helper base classes (`class _Report`), whose members count
as declared on each class deriving from them. Private names of the module (_test_double_mark)
are required only where the package's own .py files import them.
"""

import ast
import os
import re

import pytest

import iteragpu
from iteragpu import _iteragpu

PACKAGE_DIR = os.path.dirname(iteragpu.__file__)
STUB = os.path.join(PACKAGE_DIR, "_iteragpu.pyi")

_MODULE_DUNDERS = {"__doc__", "__file__", "__loader__", "__name__", "__package__", "__spec__", "__path__",
                   "__cached__", "__builtins__"}
# __signature__: set by iteragpu/__init__.py from __init__, for inspect.signature on the class.
_CLASS_DUNDERS = {"__doc__", "__module__", "__dict__", "__weakref__", "__qualname__", "__signature__"}
# A stub may leave these out (every object prints and pickles); when it has them they are checked.
_OPTIONAL_METHODS = {"__repr__", "__str__", "__getstate__", "__setstate__"}


# --- pybind11 signatures ------------------------------------------------------------------------


def _scan(text, stop):
    """Indexes of the characters of `text` in `stop` that lie outside quotes and brackets."""
    found, depth, quote, index = [], 0, None, 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{<":
            if depth == 0 and char in stop:
                found.append(index)
            depth += 1
        elif char in ")]}>":
            depth -= 1
            if depth == 0 and char in stop:
                found.append(index)
        elif depth == 0 and char in stop:
            found.append(index)
        index += 1
    return found


def _split(text, separator):
    cuts = _scan(text, separator)
    bounds = [-1] + cuts + [len(text)]
    return [text[start + 1:end].strip() for start, end in zip(bounds, bounds[1:])]


def parse_signature(line):
    """("name", [(parameter, kind, has_default)]) of one pybind11 signature line.

    kind: "positional" (by position or keyword), "positional-only", "keyword-only", "*args"
    or "**kwargs"."""
    match = re.match(r"\s*(?:\d+\.\s+)?([A-Za-z_][A-Za-z0-9_]*)\(", line)
    if not match:
        raise ValueError(f"not a pybind11 signature: {line!r}")
    opened = match.end() - 1
    # The opening parenthesis (at depth 0), then the one that closes it.
    parentheses = _scan(line[opened:], "()")
    if len(parentheses) < 2:
        raise ValueError(f"unbalanced signature: {line!r}")
    inside = line[opened + 1:opened + parentheses[1]]
    parameters, kind = [], "positional"
    for text in (_split(inside, ",") if inside.strip() else []):
        if text == "/":
            parameters = [(name, "positional-only", default) for name, _, default in parameters]
            continue
        if text == "*":
            kind = "keyword-only"
            continue
        equals = _scan(text, "=")
        declaration = text[:equals[0]] if equals else text
        name = declaration.split(":", 1)[0].strip()
        if name.startswith("**"):
            parameters.append((name[2:], "**kwargs", False))
        elif name.startswith("*"):
            parameters.append((name[1:], "*args", False))
            kind = "keyword-only"
        else:
            parameters.append((name, kind, bool(equals)))
    return match.group(1), parameters


def module_signatures(name, function):
    """Every signature (one per overload) pybind11 wrote for `function`."""
    doc = function.__doc__ or ""
    lines = doc.splitlines()
    if len(lines) > 1 and lines[1].strip() == "Overloaded function.":
        found = [line for line in lines if re.match(rf"\d+\.\s+{re.escape(name)}\(", line)]
    else:
        found = lines[:1]
    signatures = []
    for line in found:
        parsed_name, parameters = parse_signature(line)
        if parsed_name != name:
            raise ValueError(f"{name}: the docstring's signature names {parsed_name}: {line!r}")
        signatures.append(parameters)
    if not signatures:
        raise ValueError(f"{name}: no pybind11 signature in its __doc__")
    return signatures


# --- the stub ------------------------------------------------------------------------------------


def stub_parameters(function):
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = [False] * (len(positional) - len(arguments.defaults)) + [True] * len(arguments.defaults)
    parameters = []
    for index, argument in enumerate(positional):
        kind = "positional-only" if index < len(arguments.posonlyargs) else "positional"
        parameters.append((argument.arg, kind, defaults[index]))
    if arguments.vararg:
        parameters.append((arguments.vararg.arg, "*args", False))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        parameters.append((argument.arg, "keyword-only", default is not None))
    if arguments.kwarg:
        parameters.append((arguments.kwarg.arg, "**kwargs", False))
    return parameters


def _decorators(function):
    names = set()
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Name):
            names.add(decorator.id)
        elif isinstance(decorator, ast.Attribute):  # typing.overload, name.setter
            names.add(decorator.attr)
    return names


def _is_class_var(annotation):
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(target, ast.Name) and target.id == "ClassVar") or (
        isinstance(target, ast.Attribute) and target.attr == "ClassVar")


def _is_type_alias(node):
    if isinstance(node, ast.Assign):
        return True
    annotation = node.annotation
    return isinstance(annotation, (ast.Name, ast.Attribute)) and getattr(
        annotation, "id", getattr(annotation, "attr", None)) == "TypeAlias"


def stub_members(body):
    """{name: (kind, detail)} of a module's or class's body in the stub.

    kind: "class" (detail: the ClassDef), "function" / "method" / "staticmethod" /
    "classmethod" (detail: list of parameter lists, one per overload), "property" (detail:
    writable), "attribute", "classvar" or "alias"."""
    members = {}
    for node in body:
        if isinstance(node, ast.ClassDef):
            members[node.name] = ("class", node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = _decorators(node)
            if "setter" in decorators:
                members[node.name] = ("property", True)
            elif "property" in decorators:
                members.setdefault(node.name, ("property", False))
            else:
                kind = ("staticmethod" if "staticmethod" in decorators
                        else "classmethod" if "classmethod" in decorators else "method")
                if "overload" in decorators and node.name in members:
                    members[node.name][1].append(stub_parameters(node))
                else:
                    members[node.name] = (kind, [stub_parameters(node)])
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if _is_type_alias(node):
                members[node.target.id] = ("alias", None)
            else:
                members[node.target.id] = ("classvar" if _is_class_var(node.annotation) else "attribute", None)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    members[target.id] = ("alias", None)
    return members


def _base_names(node):
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


# --- the comparison ------------------------------------------------------------------------------


def _show(parameters):
    text, kind_before = [], "positional"
    for name, kind, default in parameters:
        if kind == "keyword-only" and kind_before not in ("keyword-only", "*args"):
            text.append("*")
        if kind_before == "positional-only" and kind != "positional-only":
            text.append("/")
        prefix = {"*args": "*", "**kwargs": "**"}.get(kind, "")
        text.append(f"{prefix}{name}{'=…' if default else ''}")
        kind_before = kind
    if kind_before == "positional-only":
        text.append("/")
    return f"({', '.join(text)})"


def _compare_signatures(where, module_function, name, stub_signatures):
    try:
        module = module_signatures(name, module_function)
    except ValueError as error:
        return [f"{where}: {error}"]
    if module == stub_signatures:
        return []
    return [f"{where}: the module has {' | '.join(map(_show, module))}, "
            f"the stub {' | '.join(map(_show, stub_signatures))}"]


def _module_member_kind(value):
    kind = type(value).__name__
    if kind == "pybind11_static_property":  # a property subclass, read on the class
        return "classvar"
    if isinstance(value, staticmethod):
        return "staticmethod"
    if isinstance(value, classmethod):
        return "classmethod"
    if isinstance(value, property):
        return "property"
    if kind in ("instancemethod", "builtin_function_or_method"):
        return "method"
    if kind == "wrapper_descriptor":
        return None  # a slot inherited from pybind11's base (__init__ with no constructor bound)
    return "data"


# Stub kinds that declare a module member of each kind.
_DECLARES = {
    "method": {"method"},
    "staticmethod": {"staticmethod"},
    "classmethod": {"classmethod"},
    "property": {"property", "attribute"},
    "classvar": {"classvar"},
    "data": {"attribute", "classvar"},
}


def _compare_class(module, name, cls, node, stub_classes):
    problems = []
    # Members of stub-only private bases (class _Report) count as the class's own.
    declared, bases = {}, []
    for base in _base_names(node):
        helper = stub_classes.get(base)
        if helper is not None and base.startswith("_") and not hasattr(module, base):
            for member, value in stub_members(helper.body).items():
                declared.setdefault(member, value)
        else:
            bases.append(base)
    declared.update(stub_members(node.body))
    module_bases = [base.__name__ for base in cls.__bases__ if base.__name__ not in ("pybind11_object", "object")]
    if bases != module_bases:
        problems.append(f"{name}: bases {module_bases} in the module, {bases} in the stub")

    members = {}
    for member, value in vars(cls).items():
        if member in _CLASS_DUNDERS:
            continue
        kind = _module_member_kind(value)
        if kind is not None:
            members[member] = (kind, value)
    for member, (kind, value) in members.items():
        where = f"{name}.{member}"
        if member not in declared:
            if member not in _OPTIONAL_METHODS:
                problems.append(f"{where}: a {kind} of the module that the stub lacks")
            continue
        stub_kind, detail = declared[member]
        if stub_kind not in _DECLARES[kind]:
            problems.append(f"{where}: a {kind} in the module, a {stub_kind} in the stub")
        elif kind in ("method", "staticmethod", "classmethod"):
            function = value.__func__ if kind in ("staticmethod", "classmethod") else value
            problems += _compare_signatures(where, function, member, detail)
        elif kind == "property" and stub_kind == "property" and detail != (value.fset is not None):
            problems.append(f"{where}: {'writable' if value.fset else 'read-only'} in the module, "
                            f"{'writable' if detail else 'read-only'} in the stub")
    for member, (stub_kind, _) in declared.items():
        if member not in members and stub_kind != "alias":
            problems.append(f"{name}.{member}: a {stub_kind} of the stub that the module lacks")
    return problems


def compare(module, tree):
    """Every difference between the compiled module and the stub's syntax tree, one line each."""
    problems = []
    declared = stub_members(tree.body)
    stub_classes = {name: detail for name, (kind, detail) in declared.items() if kind == "class"}
    for name, value in sorted(vars(module).items()):
        if name in _MODULE_DUNDERS:
            continue
        if name not in declared:
            if not name.startswith("_") or name.startswith("__"):
                problems.append(f"{name}: in the module, not in the stub")
            continue
        kind, detail = declared[name]
        if isinstance(value, type):
            if kind != "class":
                problems.append(f"{name}: a class in the module, a {kind} in the stub")
            else:
                problems += _compare_class(module, name, value, detail, stub_classes)
        elif callable(value):
            if kind != "method":  # a module-level def
                problems.append(f"{name}: a function in the module, a {kind} in the stub")
            else:
                problems += _compare_signatures(name, value, name, detail)
        elif kind != "attribute":
            problems.append(f"{name}: a {type(value).__name__} in the module, a {kind} in the stub")
    for name, (kind, detail) in declared.items():
        if hasattr(module, name):
            if kind == "alias":
                problems.append(f"{name}: a type alias of the stub hides the module's {name}")
            continue
        if kind == "alias":
            continue
        if kind == "class" and name.startswith("_") and any(
                name in _base_names(other) for other in stub_classes.values()):
            continue  # a stub-only helper base, checked through the classes deriving from it
        problems.append(f"{name}: a {kind if kind != 'method' else 'function'} of the stub that the module lacks")
    return problems


def _stub_tree(text=None):
    if text is None:
        with open(STUB, encoding="utf-8") as file:
            text = file.read()
    return ast.parse(text, filename=STUB)


# --- the tests -----------------------------------------------------------------------------------


def test_the_stub_matches_the_compiled_module():
    problems = compare(_iteragpu, _stub_tree())
    assert not problems, "_iteragpu.pyi differs from the compiled module:\n" + "\n".join(problems)


def test_every_name_the_package_imports_from_the_extension_is_in_the_stub():
    declared = stub_members(_stub_tree().body)
    imported = set()
    for folder, folders, files in os.walk(PACKAGE_DIR):
        folders[:] = [name for name in folders if name not in ("__pycache__", "data")]
        for file_name in files:
            if file_name.endswith(".py"):
                with open(os.path.join(folder, file_name), encoding="utf-8") as file:
                    tree = ast.parse(file.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_iteragpu"):
                        imported.update(alias.name for alias in node.names)
    assert "_test_double_mark" in imported  # the walk sees _display/, not only the top level
    assert sorted(imported - set(declared)) == []


def test_signature_parser_reads_what_pybind11_writes():
    assert parse_signature("estimate(self: iteragpu._iteragpu.MemoryEstimator, parameters: handle, "
                           "bits: handle, reserve_gib: handle = '0') -> iteragpu._iteragpu.MemoryEstimate") == (
        "estimate", [("self", "positional", False), ("parameters", "positional", False),
                     ("bits", "positional", False), ("reserve_gib", "positional", True)])
    # Keyword-only after "*", positional-only before "/", defaults holding commas, brackets,
    # "=" and quotes, annotations with brackets, *args and **kwargs.
    name, parameters = parse_signature(
        "f(a: Dict[str, int], /, b: List[Tuple[int, int]] = [(1, 2)], *, c: str = 'x, y = (z', "
        "d: Callable[[int], None] = <function <lambda> at 0x7f>, e: str = \"it's\") -> None")
    assert name == "f"
    assert parameters == [("a", "positional-only", False), ("b", "positional", True),
                          ("c", "keyword-only", True), ("d", "keyword-only", True), ("e", "keyword-only", True)]
    assert parse_signature("g(*args, **kwargs) -> None")[1] == [("args", "*args", False),
                                                                ("kwargs", "**kwargs", False)]
    assert parse_signature("shipped_path() -> str") == ("shipped_path", [])

    class Overloaded:
        __doc__ = ("h(*args, **kwargs)\nOverloaded function.\n\n"
                   "1. h(self: X, a: int) -> None\n\nThe first.\n\n"
                   "2. h(self: X, a: str, *, b: int = 2) -> None\n")

    assert module_signatures("h", Overloaded) == [
        [("self", "positional", False), ("a", "positional", False)],
        [("self", "positional", False), ("a", "positional", False), ("b", "keyword-only", True)]]


def _mutated(old, new):
    with open(STUB, encoding="utf-8") as file:
        text = file.read()
    assert old in text, old
    return compare(_iteragpu, _stub_tree(text.replace(old, new, 1)))


# (what is wrong with the stub, the text replaced in it, its replacement, the problem reported)
_MUTATIONS = [
    ("parameters-swapped",
     "def estimate(self, parameters: Number, bits: Number,", "def estimate(self, bits: Number, parameters: Number,",
     "MemoryEstimator.estimate: the module has (self, parameters, bits, reserve_gib=…), "
     "the stub (self, bits, parameters, reserve_gib=…)"),
    ("default-lost", "lots: Number = ..., date:", "lots: Number, date:", "ResultsTable.add_result: the module has"),
    ("keyword-only-lost", "def add_result(table: PathArg, *, measurement", "def add_result(table: PathArg, measurement",
     "ResultsTable.add_result: the module has (table, *, measurement"),
    ("method-not-in-module", "    def to_csv(self) -> str: ...\n    def _repr_html_",
     "    def to_csv(self) -> str: ...\n    def to_html(self) -> str: ...\n    def _repr_html_",
     "ResultsReport.to_html: a method of the stub that the module lacks"),
    ("class-not-in-module", "class UnitCost:", "class Discount: ...\nclass UnitCost:",
     "Discount: a class of the stub that the module lacks"),
    ("property-missing", "    gpu_mismatch: str\n", "\n",
     "ResultRow.gpu_mismatch: a property of the module that the stub lacks"),
    ("function-missing", "def build_description() -> str: ...\n", "",
     "build_description: in the module, not in the stub"),
    ("class-missing", "class TimingWarning:", "class _TimingWarning:", "TimingWarning: in the module, not in the stub"),
    ("static-method-as-method", "    @staticmethod\n    def shipped_path() -> str: ...",
     "    def shipped_path(self) -> str: ...", "Catalog.shipped_path: a staticmethod in the module, a method in the stub"),
    ("property-as-class-attribute", "    display_usd: str\n", "    display_usd: ClassVar[str]\n",
     "UnitCost.display_usd: a property in the module, a classvar in the stub"),
    ("wrong-base", "class OutOfMemory(MeasurementFailed)", "class OutOfMemory(Error)",
     "OutOfMemory: bases ['MeasurementFailed'] in the module, ['Error'] in the stub"),
    ("constructor-not-in-module", "class SpreadStatistics:\n",
     "class SpreadStatistics:\n    def __init__(self) -> None: ...\n",
     "SpreadStatistics.__init__: a method of the stub that the module lacks"),
]


@pytest.mark.parametrize("old, new, expected", [case[1:] for case in _MUTATIONS],
                         ids=[case[0] for case in _MUTATIONS])
def test_a_stub_that_differs_fails(old, new, expected):
    problems = _mutated(old, new)
    assert any(problem.startswith(expected) for problem in problems), "\n".join(problems)
