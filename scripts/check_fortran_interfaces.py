#!/usr/bin/python3
"""Checks that the Fortran bind(C) interfaces agree with the C prototypes they call.

  check_fortran_interfaces.py [SOURCE_DIR] [--headers PATH ...] [--fortran PATH ...]
                              [--sources PATH ...] [--verbose]

Every Fortran binding is checked against the C function it names: an interface body with
`bind(C, name="x")` (or `bind(C)`, whose name is the procedure's, lowercased), and a procedure
declaration `procedure(iface), bind(C, name="x") :: p` (checked with the abstract interface
`iface`). The named C function must exist, take as many arguments, each of a compatible type
(TYPE TABLE and POINTER RULES below) and return a compatible result (a subroutine: void).

C prototypes come from:
  - the C headers: every *.h under SOURCE_DIR/include that has an `extern "C"` guard, and the
    headers they include with #include "..." (--headers: these files, or every *.h under these
    folders, instead);
  - C and C++ sources (SOURCE_DIR/src, or --sources): functions defined or declared on their own
    with `extern "C"`, which no header declares (helpers exported for the bindings only);
  - a few C library functions the bindings call (C_LIBRARY below).
Fortran bindings come from bindings/fortran under SOURCE_DIR (or --fortran: files or folders).

Prints one line per disagreement, `file:line: C name: what`, and exits 1 if there are any;
otherwise prints "N Fortran bindings checked against M C prototypes" (M: those of the headers and
sources) and exits 0. --verbose also lists the C functions that no Fortran binding calls (not an
error). Python 3 standard library only.
"""
import argparse
import bisect
import os
import re
import sys

# ---- TYPE TABLE ---------------------------------------------------------------------------------
# The C scalar types (after typedefs are resolved; every C enum is "enum") that each interoperable
# Fortran type may stand for. Fortran has no unsigned integers: an unsigned C type is bound with the
# signed kind of its width. int is 32 bits on every platform the project builds on, so c_int and
# c_int32_t are interchangeable (the C API's enum-like typedefs are int32_t; C enums are int).
SCALAR_TYPES = {
    "integer(c_int)": {"int", "unsigned int", "int32_t", "uint32_t", "enum"},
    "integer(c_int32_t)": {"int", "unsigned int", "int32_t", "uint32_t", "enum"},
    "integer(c_int8_t)": {"int8_t", "uint8_t"},
    "integer(c_int16_t)": {"int16_t", "uint16_t"},
    "integer(c_int64_t)": {"int64_t", "uint64_t"},
    "integer(c_size_t)": {"size_t"},
    "real(c_float)": {"float"},
    "real(c_double)": {"double"},
    "logical(c_bool)": {"bool"},
    "character(c_char)": {"char"},
}

# ---- POINTER RULES (check_argument, check_result) -----------------------------------------------
#   type(c_ptr), value                    any data pointer (T*, T**, ...)
#   type(c_funptr), value                 a function pointer
#   type(c_ptr) by reference (no value),  a pointer to a pointer (T**, T***): the C function
#     scalar or array                     reads or writes pointers in the caller's variable(s)
#   by reference, scalar or array, of a   a pointer to a C type of that type's row (T*),
#     type of the table                   or void* (any data)
#   type(c_X) by reference                a pointer to the struct slipstream_X
#   type(c_X), value                      the struct slipstream_X by value (derived_type_struct)
# A type(c_ptr) without `value` is never accepted for void*: it would pass the address of the
# Fortran variable holding the pointer, not the pointer (the classic missing `value`).
# Function results: subroutine <-> void; a type of the table <-> that C type; type(c_ptr) <-> any
# data pointer; type(c_funptr) <-> a function pointer.


def derived_type_struct(fortran_type):
    """The C typedef a bind(C) derived type of the bindings mirrors: type(c_<x>) <-> slipstream_<x>
    (c_client_options_t <-> slipstream_client_options_t)."""
    if fortran_type.startswith("c_"):
        return "slipstream_" + fortran_type[2:]
    return fortran_type


# C library functions the bindings call directly, checked like the C API's (not counted among
# the C prototypes in the summary).
C_LIBRARY_PATH = "<C library>"
C_LIBRARY = """
size_t strlen(const char* s);
void free(void* pointer);
"""

# ---- C headers ----------------------------------------------------------------------------------

C_BUILTIN_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
                   "_Bool", "bool"}
C_IGNORED_WORDS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "extern",
                   "static", "inline", "__inline", "__inline__", "register", "noexcept"}
C_TOKEN_RE = re.compile(
    r'(?P<id>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)|(?P<str>"(?:\\.|[^"\\\n])*")|'
    r"(?P<chr>'(?:\\.|[^'\\\n])*')|(?P<num>\d[\w.]*)|(?P<punct>\.\.\.|::|\S)")
C_COMMENT_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


class CType:
    """A C type: `spelled` as written, `base` once typedefs are resolved ("int32_t", "enum",
    "struct slipstream_client", "void", "function" ...) and `depth`, its number of pointers (a
    function pointer is base "function", depth 1)."""

    def __init__(self, spelled, base, depth):
        self.spelled, self.base, self.depth = spelled, base, depth

    def describe(self):
        resolved = self.base + "*" * self.depth
        if resolved.replace(" ", "") == self.spelled.replace("const", "").replace(" ", ""):
            return self.spelled
        return "%s (%s)" % (self.spelled, resolved)


class CFunction:
    def __init__(self, name, result, params, path, line, variadic=False):
        self.name, self.result, self.params = name, result, params
        self.path, self.line, self.variadic = path, line, variadic


def blank_c_comments(text):
    """The text with every comment replaced by blanks (newlines kept, so lines keep numbers)."""
    def replace(match):
        s = match.group(0)
        if s.startswith("/"):
            return re.sub(r"[^\n]", " ", s)
        return s
    return C_COMMENT_RE.sub(replace, text)


def cplusplus_condition(directive, expression):
    """True or False for a conditional on __cplusplus (the headers are read as C), else None."""
    e = expression.replace(" ", "")
    if directive == "ifdef":
        return False if e == "__cplusplus" else None
    if directive == "ifndef":
        return True if e == "__cplusplus" else None
    if e in ("defined(__cplusplus)", "defined__cplusplus", "__cplusplus"):
        return False
    if e in ("!defined(__cplusplus)", "!defined__cplusplus", "!__cplusplus"):
        return True
    return None


def preprocess_c(text):
    """Comments and directives blanked; the C++-only branches (#ifdef __cplusplus) dropped. Other
    conditionals keep their first branch (include guards, compiler checks). Macros are not
    expanded: an ALL_CAPS word in a declaration is taken for an attribute macro and ignored."""
    lines = blank_c_comments(text).split("\n")
    out = []
    stack = []  # [parent active, this branch active, a branch was taken]
    active = True
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped.startswith("#"):
            out.append(line if active else "")
            i += 1
            continue
        directive_text = stripped
        count = 1
        while directive_text.endswith("\\") and i + count < len(lines):
            directive_text = directive_text[:-1] + " " + lines[i + count].strip()
            count += 1
        out.extend([""] * count)
        i += count
        m = re.match(r"#\s*(\w+)\s*(.*)$", directive_text)
        if not m:
            continue
        directive, expression = m.group(1), m.group(2).strip()
        if directive in ("if", "ifdef", "ifndef"):
            value = cplusplus_condition(directive, expression)
            branch = True if value is None else value
            stack.append([active, branch, branch])
            active = active and branch
        elif directive in ("elif", "else") and stack:
            parent, _, taken = stack[-1]
            if directive == "else":
                branch = not taken
            else:
                value = cplusplus_condition("if", expression)
                branch = (not taken) and (True if value is None else value)
            stack[-1] = [parent, branch, taken or branch]
            active = parent and branch
        elif directive == "endif" and stack:
            active = stack.pop()[0]
    return "\n".join(out)


def tokenize_c(text):
    """[(token, line)] of preprocessed C text."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tokens = []
    for m in C_TOKEN_RE.finditer(text):
        tokens.append((m.group(0), bisect.bisect_right(starts, m.start())))
    return tokens


def split_top_level(tokens, separator=","):
    """Token lists between the separators outside parentheses and brackets."""
    parts, current, depth = [], [], 0
    for tok in tokens:
        t = tok[0]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        if t == separator and depth == 0:
            parts.append(current)
            current = []
        else:
            current.append(tok)
    parts.append(current)
    return parts


def is_macro_word(word, typedefs):
    return (re.fullmatch(r"[A-Z_][A-Z0-9_]*", word) is not None and len(word) > 1
            and word not in typedefs)


def drop_attributes(tokens):
    """The tokens without __attribute__((...)) / __declspec(...) groups."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i][0] in ("__attribute__", "__declspec", "alignas", "_Alignas"):
            i += 1
            if i < len(tokens) and tokens[i][0] == "(":
                depth = 0
                while i < len(tokens):
                    if tokens[i][0] == "(":
                        depth += 1
                    elif tokens[i][0] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    i += 1
            i += 1
            continue
        out.append(tokens[i])
        i += 1
    return out


def builtin_name(words):
    """The canonical name of a type written with C's builtin words ("unsigned" -> "unsigned
    int", "long int" -> "long", "_Bool" -> "bool")."""
    unsigned = "unsigned" in words
    rest = [w for w in words if w not in ("signed", "unsigned")]
    if rest in (["_Bool"], ["bool"]):
        return "bool"
    if rest == ["void"]:
        return "void"
    if rest == ["char"]:
        return "unsigned char" if unsigned else "signed char" if "signed" in words else "char"
    if rest in (["float"], ["double"]):
        return rest[0]
    if "double" in rest:
        return "long double"
    longs = rest.count("long")
    name = ("short" if "short" in rest else "long long" if longs >= 2 else
            "long" if longs == 1 else "int")
    return "unsigned " + name if unsigned else name


class CTypeResolver:
    def __init__(self):
        # typedef name -> (base, depth) before resolution of base
        self.typedefs = {}

    def resolve(self, base, depth, seen=()):
        if base in self.typedefs and base not in seen:
            target, extra = self.typedefs[base]
            return self.resolve(target, depth + extra, seen + (base,))
        return base, depth

    def parse(self, tokens, allow_name=True):
        """(CType, name) of a declaration's type tokens (a parameter, a result, a typedef's)."""
        tokens = drop_attributes(tokens)
        words = [t for t, _ in tokens]
        # A function pointer: ret (*name)(params).
        for k in range(len(words) - 1):
            if words[k] == "(" and words[k + 1] == "*":
                close = words.index(")", k) if ")" in words[k:] else len(words)
                inner = [w for w in words[k + 1:close] if w != "*"]
                name = inner[-1] if inner and allow_name else None
                stars = words[k + 1:close].count("*")
                return CType(" ".join(words), "function", stars), name
        spelled_words = [w for w in words if (w == "const" or w not in C_IGNORED_WORDS)
                         and not is_macro_word(w, self.typedefs)]
        depth, brackets, type_words, name, tag = 0, 0, [], None, None
        for w in spelled_words:
            if w == "*" or w == "&":
                depth += 1
            elif w == "[":
                brackets += 1
            elif w in ("struct", "union", "enum"):
                tag = w
            elif re.fullmatch(r"[A-Za-z_][\w:]*", w) and w != "const":
                type_words.append(w.replace("std::", ""))
        depth += brackets
        # The parameter's name, if any: after `struct X`, or the last of two or more words
        # unless that is one of C's builtin type words (`unsigned int`).
        if allow_name and len(type_words) >= 2 and (
                (tag and len(type_words) == 2) or
                (not tag and type_words[-1] not in C_BUILTIN_WORDS)):
            name = type_words.pop()
        # The spelling without the parameter name and array bounds.
        spelled = []
        skip_name = name
        for w in spelled_words:
            if w == skip_name:
                skip_name = None
                continue
            if w in ("[", "]") or re.fullmatch(r"\d\w*", w):
                continue
            spelled.append(w.replace("std::", ""))
        spelled = " ".join(spelled).replace(" *", "*")
        if brackets:
            spelled += "*" * brackets
        if tag == "enum":
            base = "enum"
        elif tag in ("struct", "union"):
            base = "%s %s" % (tag, type_words[0] if type_words else "?")
        elif type_words and all(w in C_BUILTIN_WORDS for w in type_words):
            base = builtin_name(type_words)
        elif type_words:
            base = type_words[-1]
        else:
            base = "int"  # implicit int (not in these headers)
        base, depth = self.resolve(base, depth)
        return CType(spelled, base, depth), name

    def add_typedef(self, tokens):
        """A typedef statement (`typedef` dropped; a struct/enum body replaced by the marker)."""
        words = [t for t, _ in tokens]
        if "{BODY}" in words:
            at = words.index("{BODY}")
            head, declarators = tokens[:at], split_top_level(tokens[at + 1:])
            head_words = [w for w, _ in head if not is_macro_word(w, self.typedefs)]
            kind = next((w for w in head_words if w in ("struct", "union", "enum")), None)
            tag_name = next((w for w in head_words if w not in ("struct", "union", "enum")), None)
            for declarator in declarators:
                dwords = [w for w, _ in declarator]
                names = [w for w in dwords if re.fullmatch(r"[A-Za-z_]\w*", w)]
                if not names:
                    continue
                if kind == "enum":
                    target = "enum"
                else:
                    target = "%s %s" % (kind or "struct", tag_name or names[-1])
                self.typedefs[names[-1]] = (target, dwords.count("*"))
            return
        for declarator in split_top_level(tokens):
            ctype, name = self.parse(declarator)
            if name:
                self.typedefs[name] = (ctype.base, ctype.depth)


def c_statements(tokens):
    """Top-level declarations: (tokens, kind) with kind "statement" (ended by `;`; a struct or
    enum body replaced by a {BODY} token) or "definition" (a function with its body skipped)."""
    statements, current, i = [], [], 0
    while i < len(tokens):
        tok = tokens[i]
        t = tok[0]
        if t == ";":
            if current:
                statements.append((current, "statement"))
            current = []
        elif t == "{":
            # extern "C" { ... } (C++ sources): transparent.
            if len(current) >= 2 and current[-2][0] == "extern" and current[-1][0] == '"C"':
                current = current[:-2]
                i += 1
                continue
            depth, j = 1, i + 1
            while j < len(tokens) and depth:
                if tokens[j][0] == "{":
                    depth += 1
                elif tokens[j][0] == "}":
                    depth -= 1
                j += 1
            words = [w for w, _ in current]
            if words and words[-1] in (")", "const", "noexcept") and "(" in words \
                    and "=" not in words and words[0] not in ("struct", "union", "enum",
                                                              "typedef", "namespace", "class"):
                statements.append((current, "definition"))
                current = []
            elif words and words[0] in ("namespace", "class", "template"):
                current = []
            else:
                current.append(("{BODY}", tok[1]))
            i = j
            continue
        elif t == "}":
            current = []  # the end of an extern "C" block
        else:
            current.append(tok)
        i += 1
    if current:
        statements.append((current, "statement"))
    return statements


def parse_prototype(tokens, resolver, path):
    """A CFunction from a declaration's tokens, or None if it does not declare a function."""
    tokens = [t for t in tokens if t[0] not in ('"C"', "extern")]
    tokens = drop_attributes(tokens)
    words = [w for w, _ in tokens]
    if not words or "(" not in words or "=" in words or "{BODY}" in words:
        return None
    if words[0] in ("typedef", "struct", "union", "enum", "using", "namespace", "template",
                    "class", "return"):
        return None
    at = words.index("(")
    if at == 0 or not re.fullmatch(r"[A-Za-z_]\w*", words[at - 1]):
        return None
    if at + 1 < len(words) and words[at + 1] == "*":
        return None  # a function pointer variable
    name = words[at - 1]
    if name in C_BUILTIN_WORDS or name in C_IGNORED_WORDS or is_macro_word(name, {}):
        return None
    depth, close = 0, None
    for k in range(at, len(words)):
        if words[k] == "(":
            depth += 1
        elif words[k] == ")":
            depth -= 1
            if depth == 0:
                close = k
                break
    if close is None:
        return None
    result_tokens = tokens[:at - 1]
    if not [w for w, _ in result_tokens if not is_macro_word(w, resolver.typedefs)
            and w not in C_IGNORED_WORDS]:
        return None  # no result type: a macro call or K&R leftovers
    result, _ = resolver.parse(result_tokens, allow_name=False)
    params, variadic = [], False
    inner = tokens[at + 1:close]
    if [w for w, _ in inner] not in ([], ["void"]):
        for part in split_top_level(inner):
            if [w for w, _ in part] == ["..."]:
                variadic = True
                continue
            ctype, pname = resolver.parse(part)
            params.append((pname, ctype))
    return CFunction(name, result, params, path, tokens[at - 1][1], variadic)


def included_headers(path, text):
    folder = os.path.dirname(path)
    found = []
    for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', text, re.M):
        candidate = os.path.normpath(os.path.join(folder, m.group(1)))
        if os.path.isfile(candidate):
            found.append(candidate)
    return found


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def load_c_prototypes(headers, sources):
    """{name: CFunction} from the headers (in include order, so typedefs precede their use), the
    lone extern "C" declarations of the sources, and C_LIBRARY."""
    resolver = CTypeResolver()
    functions = {}
    ordered, seen = [], set()

    def visit(path):
        if path in seen:
            return
        seen.add(path)
        for included in included_headers(path, read_text(path)):
            visit(included)
        ordered.append(path)

    for header in headers:
        visit(os.path.normpath(header))

    def add_from(text, path):
        for tokens, _ in c_statements(tokenize_c(preprocess_c(text))):
            words = [w for w, _ in tokens]
            if words and words[0] == "typedef":
                resolver.add_typedef(tokens[1:])
                continue
            function = parse_prototype(tokens, resolver, path)
            if function and function.name not in functions:
                functions[function.name] = function

    for path in ordered:
        add_from(read_text(path), path)
    for path in sources:
        text = blank_c_comments(read_text(path))
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        for m in re.finditer(r'extern\s+"C"\s+(?!\{)([^;{]*\([^;{]*\))\s*[;{]', text):
            line = bisect.bisect_right(starts, m.start(1))
            declaration = "\n" * (line - 1) + m.group(1) + ";"
            add_from(declaration, path)
    add_from(C_LIBRARY, C_LIBRARY_PATH)
    return functions, resolver


# ---- Fortran ------------------------------------------------------------------------------------

FORTRAN_SUFFIXES = (".f90", ".F90", ".f03", ".F03", ".f08", ".F08", ".inc", ".f90.in")
TYPE_SPEC_RE = re.compile(
    r"^(?P<spec>(?:integer|real|logical|character|complex|double\s*precision|type|class)\b\s*"
    r"(?:\((?:[^()]|\([^()]*\))*\)|\*\s*\d+)?)(?P<rest>.*)$", re.I)
PREFIX_WORDS = {"pure", "impure", "elemental", "recursive", "non_recursive", "module"}
BIND_RE = re.compile(r"\bbind\s*\(\s*c\s*(?:,\s*name\s*=\s*(?P<q>[\"'])(?P<label>.*?)(?P=q)\s*)?\)",
                     re.I)


def strip_fortran_comment(line):
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "!":
            return line[:i]
    return line


def split_outside_quotes(text, separator):
    parts, current, quote, depth = [], [], None, 0
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def fortran_statements(text):
    """[(line, statement)] of free-form Fortran: comments dropped, continuations joined, `;`
    separated statements split."""
    statements, buffer, start = [], None, None
    for number, raw in enumerate(text.split("\n"), 1):
        if raw.lstrip().startswith("#"):
            continue  # preprocessor line
        code = strip_fortran_comment(raw).strip()
        if not code:
            continue  # blank and comment lines, also between continuation lines
        if buffer is not None and code.startswith("&"):
            code = code[1:].lstrip()
        continued = code.endswith("&")
        if continued:
            code = code[:-1].rstrip()
        if buffer is None:
            buffer, start = code, number
        else:
            buffer += " " + code
        if not continued:
            for part in split_outside_quotes(buffer, ";"):
                if part.strip():
                    statements.append((start, part.strip()))
            buffer = None
    if buffer:
        statements.append((start, buffer))
    return statements


class FArg:
    """A dummy argument (or a function result) of a Fortran interface."""

    def __init__(self, name):
        self.name = name
        self.spec = None       # the type spec as written ("integer(c_int)")
        self.key = None        # "integer(c_int)", "type(c_ptr)", "type(c_client_options_t)" ...
        self.problem = None    # why the type is not interoperable, if it is not
        self.value = False
        self.dims = None       # the array spec ("*", "2", ":") or None for a scalar
        self.attributes = []   # as written: "intent(in)", "optional" ...
        self.line = None

    def describe(self):
        text = self.spec or "(undeclared)"
        if self.attributes:
            text += ", " + ", ".join(self.attributes)
        text += " :: " + self.name
        if self.dims is not None:
            text += "(%s)" % self.dims
        return text


class FProcedure:
    """An interface body: its arguments in order, its result (None for a subroutine)."""

    def __init__(self, kind, name, arg_names, path, line, label, abstract):
        self.kind, self.name, self.path, self.line = kind, name, path, line
        self.label, self.abstract = label, abstract
        self.args = [FArg(n) for n in arg_names]
        self.result_name = name
        self.result = None


class FBinding:
    """A Fortran name bound to a C function: `label` checked with interface `procedure`."""

    def __init__(self, label, procedure, path, line, via=None):
        self.label, self.procedure, self.path, self.line, self.via = (
            label, procedure, path, line, via)


def parse_type_spec(spec, kind_parameters):
    """(key, problem) for a Fortran type spec: key such as "integer(c_int)" or "type(c_ptr)";
    problem says why it is not interoperable (None if it is)."""
    s = re.sub(r"\s+", "", spec.lower())
    m = re.match(r"^(integer|real|logical|character|complex|doubleprecision|type|class)"
                 r"(?:\((.*)\)|\*(\d+))?$", s)
    if not m:
        return None, "unrecognised type %s" % spec
    word, inside, star = m.group(1), m.group(2), m.group(3)
    if word in ("type", "class"):
        if word == "class" or inside is None:
            return "%s(%s)" % (word, inside), "%s is not interoperable" % spec
        return "type(%s)" % inside, None
    if word == "doubleprecision":
        return "double precision", "double precision is not a C kind: use real(c_double)"
    if star:
        return "%s*%s" % (word, star), "%s is not a C kind: use %s(c_...)" % (spec, word)
    kind, length = None, None
    if inside is not None:
        for position, item in enumerate(inside.split(",")):
            if "=" in item:
                key, value = item.split("=", 1)
            else:
                key = ("len" if word == "character" and position == 0 else "kind")
                value = item
            if key == "kind":
                kind = value
            elif key == "len":
                length = value
    while kind in kind_parameters:
        kind = kind_parameters[kind]
    if word == "character":
        if length not in (None, "1", "c_char"):
            return "character(len=%s)" % length, (
                "character(len=%s) is not interoperable: use character(kind=c_char) :: x(*)"
                % length)
        if kind not in (None, "c_char"):
            return "character(%s)" % kind, "character kind %s is not c_char" % kind
        return "character(c_char)", None  # the default character kind is c_char's
    if kind is None:
        return word, "default-kind %s is not a C kind: use %s(c_...)" % (word, word)
    key = "%s(%s)" % (word, kind)
    if key not in SCALAR_TYPES:
        return key, "%s is not in the type table" % key
    return key, None


def declare(procedure, names_dims, spec, attributes, line, kind_parameters):
    key, problem = parse_type_spec(spec, kind_parameters) if spec else (None, None)
    by_name = {a.name: a for a in procedure.args}
    for name, dims in names_dims:
        target = by_name.get(name)
        if target is None and name == procedure.result_name and procedure.kind == "function":
            target = procedure.result = procedure.result or FArg(name)
        if target is None:
            continue  # a local entity (not in an interface body) or a result of another name
        if spec:
            target.spec, target.key, target.problem = spec, key, problem
            target.line = target.line or line
        for attribute in attributes:
            a = re.sub(r"\s+", "", attribute.lower())
            if a == "value":
                target.value = True
            elif a.startswith("dimension("):
                target.dims = a[len("dimension("):-1]
                continue
            if a not in [re.sub(r"\s+", "", x.lower()) for x in target.attributes]:
                target.attributes.append(attribute.strip())
        if dims is not None:
            target.dims = dims.replace(" ", "")
        if target.line is None:
            target.line = line


def parse_entities(text):
    """[(name, array spec or None)] of an entity list ("a, b(*), c = 1")."""
    out = []
    for item in split_outside_quotes(text, ","):
        m = re.match(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?", item)
        if m:
            out.append((m.group(1).lower(), m.group(2)))
    return out


def parse_body_statement(procedure, line, statement, kind_parameters):
    m = TYPE_SPEC_RE.match(statement)
    if m and not re.match(r"^type\s*,|^type\s+\w+\s*$", statement, re.I):
        rest = m.group("rest")
        if "::" in rest:
            attributes_text, entities = rest.split("::", 1)
            attributes = [a for a in split_outside_quotes(attributes_text, ",") if a.strip()]
        else:
            attributes, entities = [], rest
        declare(procedure, parse_entities(entities), m.group("spec").strip(), attributes, line,
                kind_parameters)
        return
    m = re.match(r"^(value|optional|target|pointer|allocatable|contiguous|volatile|asynchronous|"
                 r"intent\s*\(\s*\w+\s*\)|dimension\s*\(.*?\))\s*(?:::)?\s*(.*)$", statement, re.I)
    if m:
        attribute = m.group(1)
        entities = parse_entities(m.group(2))
        if attribute.lower().startswith("dimension"):
            dims = attribute[attribute.index("(") + 1:-1]
            entities = [(n, d if d is not None else dims) for n, d in entities]
            attribute = None
        declare(procedure, entities, None, [attribute] if attribute else [], line,
                kind_parameters)


def parse_header(statement):
    """(kind, name, args, prefix type spec, suffix) of a function/subroutine statement, or None."""
    m = re.match(r"^(?P<prefix>.*?)\b(?P<kind>function|subroutine)\s+(?P<name>[A-Za-z_]\w*)\s*"
                 r"(?:\((?P<args>[^)]*)\))?(?P<suffix>.*)$", statement, re.I)
    if not m:
        return None
    prefix = m.group("prefix").strip()
    if re.match(r"^end\b", statement, re.I):
        return None
    words = prefix
    while True:
        w = re.match(r"^(\w+)\s*(.*)$", words)
        if w and w.group(1).lower() in PREFIX_WORDS:
            words = w.group(2)
            continue
        break
    type_spec = None
    if words:
        t = TYPE_SPEC_RE.match(words)
        if not t:
            return None
        type_spec = t.group("spec").strip()
        tail = t.group("rest").strip()
        if tail and any(x.lower() not in PREFIX_WORDS for x in tail.split()):
            return None
    args = [a.strip().lower() for a in (m.group("args") or "").split(",") if a.strip()]
    return (m.group("kind").lower(), m.group("name"), args, type_spec, m.group("suffix"))


def collect_kind_parameters(statements, kind_parameters):
    """Named constants that alias a C kind (`integer, parameter :: enum_kind = c_int`)."""
    for _, statement in statements:
        m = re.match(r"^integer\s*,\s*parameter\s*::\s*(.*)$", statement, re.I)
        if not m:
            continue
        for item in split_outside_quotes(m.group(1), ","):
            pair = re.match(r"\s*(\w+)\s*=\s*([A-Za-z_]\w*)\s*$", item)
            if pair:
                kind_parameters[pair.group(1).lower()] = pair.group(2).lower()


def load_fortran(paths):
    """The FBindings of the Fortran files."""
    file_statements = {}
    kind_parameters = {}
    for path in paths:
        file_statements[path] = fortran_statements(read_text(path))
        collect_kind_parameters(file_statements[path], kind_parameters)

    bindings = []
    interfaces = {}  # (path, name) and name -> FProcedure (every interface body)
    pending = []     # procedure(iface), bind(C ...) declarations
    for path, statements in file_statements.items():
        interface_stack = []  # "abstract" or "plain"
        body = None
        nested = 0
        for line, statement in statements:
            low = statement.lower()
            if body is not None:
                if re.match(r"^(abstract\s+)?interface\b", low):
                    nested += 1
                elif nested and re.match(r"^end\s*interface\b", low):
                    nested -= 1
                elif nested:
                    pass
                elif re.match(r"^end\s*(?:(?:function|subroutine)(?:\s+\w+)?)?\s*$", low):
                    body = None
                else:
                    parse_body_statement(body, line, statement, kind_parameters)
                continue
            if re.match(r"^abstract\s+interface\b", low):
                interface_stack.append("abstract")
                continue
            if re.match(r"^interface\b", low):
                interface_stack.append("plain")
                continue
            if re.match(r"^end\s*interface\b", low):
                if interface_stack:
                    interface_stack.pop()
                continue
            if interface_stack:
                header = parse_header(statement)
                if header:
                    kind, name, args, type_spec, suffix = header
                    bind = BIND_RE.search(suffix)
                    abstract = interface_stack[-1] == "abstract"
                    label = None
                    if bind and not abstract:
                        label = bind.group("label")
                        if label is None:
                            label = name.lower()
                    body = FProcedure(kind, name, args, path, line, label, abstract)
                    result = re.search(r"\bresult\s*\(\s*(\w+)\s*\)", suffix, re.I)
                    if result:
                        body.result_name = result.group(1).lower()
                    else:
                        body.result_name = name.lower()
                    if kind == "function" and type_spec:
                        body.result = FArg(body.result_name)
                        body.result.spec = type_spec
                        body.result.key, body.result.problem = parse_type_spec(type_spec,
                                                                               kind_parameters)
                        body.result.line = line
                    interfaces[(path, name.lower())] = body
                    interfaces.setdefault(name.lower(), body)
                    if label is not None:
                        bindings.append(FBinding(label, body, path, line))
                continue
            m = re.match(r"^procedure\s*\(\s*(\w+)\s*\)\s*,(.*?)::(.*)$", statement, re.I)
            if m:
                bind = BIND_RE.search(m.group(2))
                if bind:
                    for name, _ in parse_entities(m.group(3)):
                        label = bind.group("label")
                        pending.append((label if label is not None else name, m.group(1).lower(),
                                        path, line))
    for label, interface, path, line in pending:
        procedure = interfaces.get((path, interface)) or interfaces.get(interface)
        bindings.append(FBinding(label, procedure, path, line, via=interface))
    return bindings


# ---- Comparison ---------------------------------------------------------------------------------

TYPES_DIFFER = "the types differ (see the type table)"


def check_argument(farg, ctype, resolver):
    """None if the Fortran dummy argument may be passed to the C parameter, else why not."""
    if farg.spec is None:
        return "no type declaration for the Fortran argument"
    if farg.problem:
        return farg.problem
    low_attributes = [re.sub(r"\s+", "", a.lower()) for a in farg.attributes]
    if "pointer" in low_attributes or "allocatable" in low_attributes:
        return "a pointer or allocatable argument is passed as a descriptor"
    if farg.dims is not None and (":" in farg.dims or ".." in farg.dims):
        return "an assumed-shape or assumed-rank array is passed as a descriptor"
    key = farg.key
    base, depth = ctype.base, ctype.depth
    if farg.value:
        if farg.dims is not None:
            return "an array cannot be passed by value"
        if key == "type(c_ptr)":
            if depth >= 1 and base != "function":
                return None
            return "type(c_ptr), value needs a C data pointer"
        if key == "type(c_funptr)":
            return None if (base, depth) == ("function", 1) else \
                "type(c_funptr), value needs a C function pointer"
        if depth != 0:
            return "C takes a pointer; the Fortran argument is passed by value"
        if key.startswith("type("):
            return None if base == struct_base(key, resolver) else "another struct"
        return None if base in SCALAR_TYPES.get(key, ()) else TYPES_DIFFER
    # By reference: the C parameter must be a pointer.
    if depth == 0:
        return "C takes a value; the Fortran argument has no `value` attribute"
    if key == "type(c_ptr)":
        if depth >= 2 and base != "function":
            return None
        if (base, depth) == ("void", 1):
            return ("type(c_ptr) without `value` passes the address of the pointer variable to "
                    "void*")
        return "type(c_ptr) by reference needs a C pointer to a pointer"
    if key == "type(c_funptr)":
        return None if (base, depth) == ("function", 2) else \
            "type(c_funptr) by reference needs a pointer to a C function pointer"
    if (base, depth) == ("void", 1):
        return None
    if depth != 1:
        return "C takes a pointer to a pointer"
    if key.startswith("type("):
        return None if base == struct_base(key, resolver) else "another struct"
    return None if base in SCALAR_TYPES.get(key, ()) else TYPES_DIFFER


def struct_base(key, resolver):
    """The resolved C type that a type(c_x) argument is (by value) or points to (by reference)."""
    base, depth = resolver.resolve(derived_type_struct(key[len("type("):-1]), 0)
    return base if depth == 0 else None


def check_result(procedure, ctype, resolver):
    if procedure.kind == "subroutine":
        if (ctype.base, ctype.depth) == ("void", 0):
            return None
        return "C returns %s; the Fortran interface is a subroutine" % ctype.describe()
    result = procedure.result
    if (ctype.base, ctype.depth) == ("void", 0):
        return "C returns void; the Fortran interface is a function"
    if result is None or result.spec is None:
        return "the Fortran function result has no type declaration"
    if result.problem:
        return "result: %s" % result.problem
    if result.dims is not None:
        return "an array result is not interoperable"
    key, base, depth = result.key, ctype.base, ctype.depth
    ok = False
    if key == "type(c_ptr)":
        ok = depth >= 1 and base != "function"
    elif key == "type(c_funptr)":
        ok = (base, depth) == ("function", 1)
    elif depth == 0 and key.startswith("type("):
        ok = base == struct_base(key, resolver)
    elif depth == 0:
        ok = base in SCALAR_TYPES.get(key, ())
    if ok:
        return None
    return "result: C %s vs Fortran %s" % (ctype.describe(), result.spec)


def relative(path, root):
    if path.startswith("<"):
        return path
    absolute = os.path.abspath(path)
    if root and absolute.startswith(os.path.abspath(root) + os.sep):
        return os.path.relpath(absolute, root)
    return path


def check(bindings, functions, resolver, root):
    """The list of disagreement lines."""
    problems = []
    for binding in bindings:
        where = "%s:%d" % (relative(binding.path, root), binding.line)
        procedure = binding.procedure
        via = " (interface %s at line %d)" % (binding.via, procedure.line) \
            if binding.via and procedure else ""
        if procedure is None:
            problems.append("%s: %s: no interface named %s for this procedure declaration"
                            % (where, binding.label, binding.via))
            continue
        function = functions.get(binding.label)
        if function is None:
            problems.append("%s: %s: no C prototype of that name (Fortran %s %s)"
                            % (where, binding.label, procedure.kind, procedure.name))
            continue
        c_where = "%s:%d" % (relative(function.path, root), function.line)
        if function.variadic:
            problems.append("%s: %s: the C function is variadic; Fortran cannot call it [C: %s]"
                            % (where, binding.label, c_where))
        problem = check_result(procedure, function.result, resolver)
        if problem:
            problems.append("%s: %s%s: %s [C: %s]" % (where, binding.label, via, problem, c_where))
        n_c, n_f = len(function.params), len(procedure.args)
        if n_c != n_f:
            first = ""
            for index in range(min(n_c, n_f)):
                farg, (cname, ctype) = procedure.args[index], function.params[index]
                if check_argument(farg, ctype, resolver):
                    first = "; the first that disagrees is argument %d: C %s %s vs Fortran %s" % (
                        index + 1, ctype.describe(), cname or "", farg.describe())
                    break
            problems.append("%s: %s%s: C takes %d arguments, the Fortran %s %s has %d%s [C: %s]"
                            % (where, binding.label, via, n_c, procedure.kind, procedure.name,
                               n_f, first, c_where))
            continue
        for index, (farg, (cname, ctype)) in enumerate(zip(procedure.args, function.params), 1):
            problem = check_argument(farg, ctype, resolver)
            if problem:
                if binding.via:  # at the procedure declaration, saying where the argument is
                    line, arg_via = binding.line, " (interface %s, argument declared at line %d)" \
                        % (binding.via, farg.line or procedure.line)
                else:
                    line, arg_via = farg.line or binding.line, ""
                problems.append("%s:%d: %s%s: argument %d (%s): C %s vs Fortran %s: %s [C: %s]"
                                % (relative(binding.path, root), line, binding.label, arg_via,
                                   index, farg.name, ctype.describe(), farg.describe(), problem,
                                   c_where))
    return problems


# ---- Command line -------------------------------------------------------------------------------

def files_under(paths, suffixes, require=None):
    found = []
    for path in paths:
        if os.path.isdir(path):
            for folder, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(suffixes):
                        full = os.path.join(folder, name)
                        if require is None or require in read_text(full):
                            found.append(full)
        elif os.path.isfile(path):
            found.append(path)
        else:
            raise SystemExit("check_fortran_interfaces.py: no such file or folder: %s" % path)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Checks the Fortran bind(C) interfaces against the C prototypes.")
    parser.add_argument("source_dir", nargs="?",
                        default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the project's source folder (default: this script's parent's)")
    parser.add_argument("--headers", action="append", metavar="PATH",
                        help="C headers, or folders of *.h (default: the headers under "
                             "SOURCE_DIR/include with an extern \"C\" guard)")
    parser.add_argument("--fortran", action="append", metavar="PATH",
                        help="Fortran files or folders (default: SOURCE_DIR/bindings/fortran)")
    parser.add_argument("--sources", action="append", metavar="PATH",
                        help="C/C++ sources or folders whose lone extern \"C\" functions count "
                             "as prototypes (default: SOURCE_DIR/src)")
    parser.add_argument("--verbose", action="store_true",
                        help="also list the C functions that no Fortran binding calls")
    args = parser.parse_args(argv)
    root = args.source_dir

    if args.headers:
        headers = files_under(args.headers, (".h",))
    else:
        headers = files_under([os.path.join(root, "include")], (".h",), require='extern "C"')
    if args.sources is not None:
        sources = files_under(args.sources, (".c", ".cc", ".cpp", ".cxx"))
    elif os.path.isdir(os.path.join(root, "src")):
        sources = files_under([os.path.join(root, "src")], (".c", ".cc", ".cpp", ".cxx"),
                              require='extern "C"')
    else:
        sources = []
    fortran = files_under(args.fortran or [os.path.join(root, "bindings", "fortran")],
                          FORTRAN_SUFFIXES)
    if not headers:
        raise SystemExit("check_fortran_interfaces.py: no C headers found")
    if not fortran:
        raise SystemExit("check_fortran_interfaces.py: no Fortran files found")

    functions, resolver = load_c_prototypes(headers, sources)
    bindings = load_fortran(fortran)
    problems = check(bindings, functions, resolver, root)

    if args.verbose:
        bound = {b.label for b in bindings}
        unbound = sorted(name for name, f in functions.items()
                         if name not in bound and f.path != C_LIBRARY_PATH)
        print("%d C functions have no Fortran binding:" % len(unbound))
        for name in unbound:
            print("  " + name)
    for line in problems:
        print(line)
    if problems:
        print("%d disagreement%s between the Fortran bindings and the C prototypes"
              % (len(problems), "" if len(problems) == 1 else "s"))
        return 1
    scanned = sum(1 for f in functions.values() if f.path != C_LIBRARY_PATH)
    print("%d Fortran bindings checked against %d C prototypes" % (len(bindings), scanned))
    return 0


if __name__ == "__main__":
    sys.exit(main())
