// @ts-check
// Python's `re` syntax and matching rules (Python 3.11, str patterns), translated into an equivalent JavaScript
// RegExp, so the static export (static.js, pysearch.js) finds exactly what the notebook's `re.search` finds.
// A pattern Python rejects is rejected here too; the few constructs JavaScript cannot express (atomic groups,
// possessive quantifiers, conditionals, \N{name}, the ASCII flag) are refused with a message naming them.
// Pure: no DOM, no state between calls.

/** Python's `str.isspace()` characters: what `\s` matches in a str pattern. */
const PY_SPACE = "\\t\\n\\v\\f\\r\\u{1c}-\\u{1f} \\u{85}\\u{a0}\\u{1680}\\u{2000}-\\u{200a}\\u{2028}\\u{2029}\\u{202f}\\u{205f}\\u{3000}";
/** Python's `\w` (str.isalnum() or "_"): letters, numbers, underscore (checked code point by code point). */
const PY_WORD = "\\p{L}\\p{N}_";
const WORD = `[${PY_WORD}]`;
const ANY = "[\\s\\S]";
/** Under IGNORECASE Python's sre treats i, I, İ (U+0130) and ı (U+0131) as one letter; JavaScript's case folding
 * keeps the dotted and dotless ones apart, so they are spelled out. */
const I_FAMILY = [0x69, 0x49, 0x130, 0x131];

const MAXREPEAT = 4294967295;
const MAXWIDTH = 2 ** 53;
const ASCII_LETTERS = /^[A-Za-z]$/;
const DIGITS = /^[0-9]$/;
const OCTAL = /^[0-7]$/;
const HEX = /^[0-9A-Fa-f]$/;
const PY_FLAGS = "aiLmstux";

/** A pattern Python itself rejects: the message Python's re.error would give (without its position). */
export class PatternError extends Error {}
/** A valid Python pattern this page cannot run. */
export class UnsupportedPattern extends Error {}

/** @type {boolean | null} whether this browser's RegExp has scoped modifiers (?i:…), once asked */
let modifiers = null;
function supportsModifiers() {
  if (modifiers === null) {
    try {
      /(?i:a)/u;
      modifiers = true;
    } catch {
      modifiers = false;
    }
  }
  return modifiers;
}

/** @param {string} c  one code point */
const cp = (c) => /** @type {number} */ (c.codePointAt(0));
/** A code point as a RegExp atom (u mode): letters and digits as they are, everything else as \u{...}.
 *  @param {number} code */
function lit(code) {
  const c = String.fromCodePoint(code);
  return /^[A-Za-z0-9]$/.test(c) ? c : `\\u{${code.toString(16)}}`;
}

/** Python's str.isidentifier(), near enough for group names (JavaScript checks its own rules on top). */
const isIdentifier = (/** @type {string} */ name) => /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(name);

class Source {
  /** @param {string} pattern */
  constructor(pattern) {
    this.chars = Array.from(pattern);
    this.at = 0;
  }
  get next() {
    const c = this.chars[this.at];
    if (c === undefined) return null;
    if (c === "\\") {
      const d = this.chars[this.at + 1];
      if (d === undefined) throw new PatternError("bad escape (end of pattern)");
      return c + d;
    }
    return c;
  }
  /** the next token: one code point, or a backslash and the code point it escapes */
  get() {
    const c = this.next;
    if (c !== null) this.at += c[0] === "\\" ? 2 : 1;
    return c;
  }
  /** @param {string} c */
  match(c) {
    if (this.next === c) {
      this.get();
      return true;
    }
    return false;
  }
  /** up to `n` single characters passing `test` @param {number} n @param {RegExp} test */
  getWhile(n, test) {
    let out = "";
    while (out.length < n && this.chars[this.at] !== undefined && test.test(this.chars[this.at])) out += this.chars[this.at++];
    return out;
  }
  /** @param {string} end @param {string} what  named in the error when nothing comes before `end` */
  getUntil(end, what) {
    let out = "";
    for (;;) {
      const c = this.chars[this.at];
      if (c === undefined) throw new PatternError(`missing ${end}, unterminated name`);
      this.at += 1;
      if (c === end) break;
      out += c;
    }
    if (!out) throw new PatternError(`missing ${what}`);
    return out;
  }
}

/**
 * @typedef {{lo: number, hi: number}} Width
 * @typedef {{src: string, lo: number, hi: number, kind: string, group?: number}} Node
 * @typedef {{i: boolean, m: boolean, s: boolean, x: boolean}} Flags
 * @typedef {number | {src: string, negated: boolean}} ClassItem  a code point, or \d \D \s \S \w \W in a class
 */

class Translator {
  /** @param {string} pattern @param {boolean} ignoreCase */
  constructor(pattern, ignoreCase) {
    this.source = new Source(pattern);
    this.flags = { i: ignoreCase, m: false, s: false, x: false };
    this.groups = 1; // Python's state.groups: the next group number
    /** @type {Map<number, Width>} */
    this.closed = new Map(); // group number -> its width, once closed
    /** @type {Map<string, number>} */
    this.names = new Map(); // group name -> number
    /** @type {number | null} */
    this.lookbehindFrom = null; // first group number inside the lookbehind being parsed
  }

  translate() {
    const body = this.alternation(this.flags, 0);
    if (this.source.next !== null) throw new PatternError("unbalanced parenthesis");
    return { source: body.src, flags: this.flags.i ? "iu" : "u" };
  }

  /** a|b|c @param {Flags} flags @param {number} nested  group depth @returns {Node} */
  alternation(flags, nested) {
    const branches = [];
    for (;;) {
      branches.push(this.sequence(flags, nested, nested === 0 && branches.length === 0));
      if (!this.source.match("|")) break;
    }
    if (branches.length === 1) return branches[0];
    return {
      src: branches.map((b) => b.src).join("|"),
      lo: Math.min(...branches.map((b) => b.lo)),
      hi: Math.max(...branches.map((b) => b.hi)),
      kind: "branch",
    };
  }

  /** items up to `|`, `)` or the end, each with its quantifier
   *  @param {Flags} flags @param {number} nested @param {boolean} first  at the very start of the pattern @returns {Node} */
  sequence(flags, nested, first) {
    /** @type {Node[]} */
    const items = [];
    const source = this.source;
    for (;;) {
      const c = source.next;
      if (c === null || c === "|" || c === ")") break;
      source.get();
      if (flags.x) {
        if (" \t\n\r\v\f".includes(c)) continue;
        if (c === "#") {
          for (let d = source.get(); d !== null && d !== "\n"; d = source.get());
          continue;
        }
      }
      if (c[0] === "\\") items.push(this.escape(c, flags));
      else if (!".\\[{()*+?^$|".includes(c)) items.push(this.literal(cp(c), flags));
      else if (c === "[") items.push(this.charClass(flags));
      else if ("*+?{".includes(c)) {
        const quantified = this.quantifier(c, items);
        if (quantified) items[items.length - 1] = quantified;
        else items.push(this.literal(cp(c), flags)); // a "{" that starts no {m,n}
      } else if (c === ".") items.push({ src: flags.s ? ANY : "[^\\n]", lo: 1, hi: 1, kind: "unit" });
      else if (c === "^") items.push({ src: flags.m ? "(?:^|(?<=\\n))" : "^", lo: 0, hi: 0, kind: "at" });
      else if (c === "$") items.push({ src: flags.m ? "(?=\\n|$)" : "(?=\\n?$)", lo: 0, hi: 0, kind: "at" });
      else if (c === "(") {
        const group = this.group(flags, nested, first && items.length === 0);
        if (group === "global") {
          continue;
        }
        if (group) items.push(group);
      }
    }
    return {
      src: items.map((i) => i.src).join(""),
      lo: items.reduce((sum, i) => Math.min(MAXWIDTH, sum + i.lo), 0),
      hi: items.reduce((sum, i) => Math.min(MAXWIDTH, sum + i.hi), 0),
      kind: "seq",
    };
  }

  /** @param {number} code @param {{i: boolean}} flags @returns {Node} */
  literal(code, flags) {
    if (flags.i && I_FAMILY.includes(code)) return { src: `[${I_FAMILY.map(lit).join("")}]`, lo: 1, hi: 1, kind: "unit" };
    return { src: lit(code), lo: 1, hi: 1, kind: "unit" };
  }

  /** Returns the quantified last item, or null when `{` starts no quantifier (then it is a literal).
   *  @param {string} c @param {Node[]} items @returns {Node | null} */
  quantifier(c, items) {
    const source = this.source;
    let min;
    let max;
    if (c === "?") [min, max] = [0, 1];
    else if (c === "*") [min, max] = [0, MAXREPEAT];
    else if (c === "+") [min, max] = [1, MAXREPEAT];
    else {
      if (source.next === "}") return null;
      const here = source.at;
      const lo = source.getWhile(Infinity, DIGITS);
      let hi;
      if (source.match(",")) hi = source.getWhile(Infinity, DIGITS);
      else hi = lo;
      if (!source.match("}")) {
        source.at = here;
        return null;
      }
      min = lo ? Number(lo) : 0;
      max = hi ? Number(hi) : MAXREPEAT;
      if (min >= MAXREPEAT || (hi && max >= MAXREPEAT)) throw new PatternError("the repetition number is too large");
      if (hi && max < min) throw new PatternError("min repeat greater than max repeat");
    }
    const item = items[items.length - 1];
    if (!item || item.kind === "at") throw new PatternError("nothing to repeat");
    if (item.kind === "repeat") throw new PatternError("multiple repeat");
    let lazy = "";
    if (source.match("?")) lazy = "?";
    else if (source.match("+")) throw new UnsupportedPattern("possessive quantifiers (*+, ++, ?+, {m,n}+)");
    const bound = max === MAXREPEAT ? `{${min},}` : `{${min},${max}}`;
    const hiWidth = max === MAXREPEAT && item.hi ? MAXWIDTH : Math.min(MAXWIDTH, item.hi * max);
    return { src: `(?:${item.src})${bound}${lazy}`, lo: Math.min(MAXWIDTH, item.lo * min), hi: hiWidth, kind: "repeat" };
  }

  /** `\x` outside a class @param {string} c @param {Flags} flags @returns {Node} */
  escape(c, flags) {
    const source = this.source;
    const letter = c[1];
    switch (c) {
      case "\\A": // JavaScript's own anchors (no m flag is ever set): start and end of the text
        return { src: "^", lo: 0, hi: 0, kind: "at" };
      case "\\Z":
        return { src: "$", lo: 0, hi: 0, kind: "at" };
      case "\\b":
        return { src: `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`, lo: 0, hi: 0, kind: "at" };
      case "\\B": // never matches inside an empty string (Python before 3.14)
        return { src: `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD})(?!^$))`, lo: 0, hi: 0, kind: "at" };
      case "\\d":
        return { src: "\\p{Nd}", lo: 1, hi: 1, kind: "unit" };
      case "\\D":
        return { src: "\\P{Nd}", lo: 1, hi: 1, kind: "unit" };
      case "\\s":
        return { src: `[${PY_SPACE}]`, lo: 1, hi: 1, kind: "unit" };
      case "\\S":
        return { src: `[^${PY_SPACE}]`, lo: 1, hi: 1, kind: "unit" };
      case "\\w":
        return { src: WORD, lo: 1, hi: 1, kind: "unit" };
      case "\\W":
        return { src: `[^${PY_WORD}]`, lo: 1, hi: 1, kind: "unit" };
    }
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return this.literal(simple, flags);
    if (letter === "x" || letter === "u" || letter === "U" || letter === "N") return this.literal(this.codeEscape(c), flags);
    if (letter === "0") return this.literal(parseInt(source.getWhile(2, OCTAL) || "0", 8), flags);
    if (DIGITS.test(letter)) {
      let digits = letter;
      if (source.next !== null && DIGITS.test(source.next)) {
        digits += source.get();
        if (OCTAL.test(digits[0]) && OCTAL.test(digits[1]) && source.next !== null && OCTAL.test(source.next)) {
          digits += source.get();
          const code = parseInt(digits, 8);
          if (code > 0o377) throw new PatternError(`octal escape value \\${digits} outside of range 0-0o377`);
          return this.literal(code, flags);
        }
      }
      return this.groupRef(Number(digits), `invalid group reference ${Number(digits)}`);
    }
    if (ASCII_LETTERS.test(letter)) throw new PatternError(`bad escape ${c}`);
    return this.literal(cp(letter), flags);
  }

  /** \xhh, \uhhhh, \Uhhhhhhhh (and \N{name}, which this page cannot resolve) @param {string} c @returns {number} */
  codeEscape(c) {
    const letter = c[1];
    if (letter === "N") throw new UnsupportedPattern("\\N{name} escapes");
    const want = letter === "x" ? 2 : letter === "u" ? 4 : 8;
    const hex = this.source.getWhile(want, HEX);
    if (hex.length !== want) throw new PatternError(`incomplete escape ${c}${hex}`);
    const code = parseInt(hex, 16);
    if (code > 0x10ffff) throw new PatternError(`bad escape ${c}${hex}`);
    return code;
  }

  /** @param {number} number @param {string} missing  the message when there is no such group @returns {Node} */
  groupRef(number, missing) {
    if (number >= this.groups) throw new PatternError(missing);
    if (!this.closed.has(number)) throw new PatternError("cannot refer to an open group");
    if (this.lookbehindFrom !== null && number >= this.lookbehindFrom) throw new PatternError("cannot refer to group defined in the same lookbehind subpattern");
    const width = /** @type {Width} */ (this.closed.get(number));
    return { src: `(?:\\${number})`, lo: width.lo, hi: width.hi, kind: "ref" };
  }

  /** `(` ... `)`; "global" for a leading (?flags)
   *  @param {Flags} flags @param {number} nested @param {boolean} first @returns {Node | "global" | null} */
  group(flags, nested, first) {
    const source = this.source;
    let capture = true;
    let name = null;
    let inner = flags;
    let open = "(";
    if (source.match("?")) {
      const c = source.get();
      if (c === null) throw new PatternError("unexpected end of pattern");
      if (c === "P") {
        if (source.match("<")) {
          name = source.getUntil(">", "group name");
          if (!isIdentifier(name)) throw new PatternError(`bad character in group name ${pyRepr(name)}`);
        } else if (source.match("=")) {
          const ref = source.getUntil(")", "group name");
          if (!isIdentifier(ref)) throw new PatternError(`bad character in group name ${pyRepr(ref)}`);
          const number = this.names.get(ref);
          if (number === undefined) throw new PatternError(`unknown group name ${pyRepr(ref)}`);
          return this.groupRef(number, `unknown group name ${pyRepr(ref)}`);
        } else {
          const d = source.get();
          if (d === null) throw new PatternError("unexpected end of pattern");
          throw new PatternError(`unknown extension ?P${d}`);
        }
      } else if (c === ":") {
        capture = false;
        open = "(?:";
      } else if (c === "#") {
        for (;;) {
          if (source.next === null) throw new PatternError("missing ), unterminated comment");
          if (source.get() === ")") break;
        }
        return null;
      } else if (c === "=" || c === "!" || c === "<") {
        let kind = c;
        let behind = false;
        if (c === "<") {
          const d = source.get();
          if (d === null) throw new PatternError("unexpected end of pattern");
          if (d !== "=" && d !== "!") throw new PatternError(`unknown extension ?<${d}`);
          kind = d;
          behind = true;
        }
        const outer = this.lookbehindFrom;
        if (behind && outer === null) this.lookbehindFrom = this.groups;
        const body = this.alternation(flags, nested + 1);
        if (behind) this.lookbehindFrom = outer;
        if (!source.match(")")) throw new PatternError("missing ), unterminated subpattern");
        if (behind && body.lo !== body.hi) throw new PatternError("look-behind requires fixed-width pattern");
        return { src: `(?${behind ? "<" : ""}${kind}${body.src})`, lo: 0, hi: 0, kind: "assert" };
      } else if (c === "(") {
        throw new UnsupportedPattern("conditional groups (?(…)…|…)");
      } else if (c === ">") {
        throw new UnsupportedPattern("atomic groups (?>…)");
      } else if (PY_FLAGS.includes(c) || c === "-") {
        const parsed = this.inlineFlags(c);
        if (parsed === null) {
          if (!first) throw new PatternError("global flags not at the start of the expression");
          return "global";
        }
        inner = { ...flags };
        const scoped = [];
        for (const f of parsed.add) inner[f] = true;
        for (const f of parsed.del) inner[f] = false;
        if (parsed.add.includes("i") || parsed.del.includes("i")) {
          if (!supportsModifiers()) throw new UnsupportedPattern("scoped case flags (?i:…) / (?-i:…) in this browser");
          scoped.push(parsed.add.includes("i") ? "i" : "-i");
        }
        capture = false;
        open = scoped.length ? `(?${scoped[0]}:` : "(?:";
      } else {
        throw new PatternError(`unknown extension ?${c}`);
      }
    }
    let number = null;
    if (capture) {
      number = this.groups;
      this.groups += 1;
      if (name !== null) {
        if (this.names.has(name)) throw new PatternError(`redefinition of group name ${pyRepr(name)} as group ${number}; was group ${this.names.get(name)}`);
        this.names.set(name, number);
        open = `(?<${name}>`;
      }
    }
    const body = this.alternation(inner, nested + 1);
    if (!source.match(")")) throw new PatternError("missing ), unterminated subpattern");
    if (number !== null) this.closed.set(number, { lo: body.lo, hi: body.hi });
    return { src: `${open}${body.src})`, lo: body.lo, hi: body.hi, kind: "group" };
  }

  /** After `(?`: the letters up to `)` (global: returns null, sets this.flags) or `:` (scoped).
   *  @param {string} c @returns {{add: Array<keyof Flags>, del: Array<keyof Flags>} | null} */
  inlineFlags(c) {
    const source = this.source;
    /** @type {string[]} */
    const add = [];
    /** @type {string[]} */
    const del = [];
    /** @type {string | null} */
    let char = c;
    if (char !== "-") {
      for (;;) {
        if (char === "L") throw new PatternError("bad inline flags: cannot use 'L' flag with a str pattern");
        if (char === "a") throw new UnsupportedPattern("the ASCII flag (?a)");
        add.push(char);
        char = source.get();
        if (char === null) throw new PatternError("missing -, : or )");
        if (")-:".includes(char)) break;
        if (!PY_FLAGS.includes(char)) throw new PatternError(/\p{L}/u.test(char) ? "unknown flag" : "missing -, : or )");
      }
    }
    if (char === ")") {
      if (add.includes("t")) throw new UnsupportedPattern("the TEMPLATE flag (?t)");
      for (const f of add) if (f in this.flags) this.flags[/** @type {keyof Flags} */ (f)] = true;
      return null;
    }
    if (add.includes("t")) throw new PatternError("bad inline flags: cannot turn on global flag");
    if (char === "-") {
      char = source.get();
      if (char === null) throw new PatternError("missing flag");
      if (!PY_FLAGS.includes(char)) throw new PatternError(/\p{L}/u.test(char) ? "unknown flag" : "missing flag");
      for (;;) {
        if ("aLu".includes(char)) throw new PatternError("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
        del.push(char);
        char = source.get();
        if (char === null) throw new PatternError("missing :");
        if (char === ":") break;
        if (!PY_FLAGS.includes(char)) throw new PatternError(/\p{L}/u.test(char) ? "unknown flag" : "missing :");
      }
    }
    if (del.includes("t")) throw new PatternError("bad inline flags: cannot turn off global flag");
    if (add.some((f) => del.includes(f))) throw new PatternError("bad inline flags: flag turned on and off");
    // What is left is i, m, s or x: a, L, t and unknown letters threw above, u is Python's default for str.
    return { add: /** @type {Array<keyof Flags>} */ (add.filter((f) => f !== "u")), del: /** @type {Array<keyof Flags>} */ (del) };
  }

  /** `[` ... `]` @param {Flags} flags @returns {Node} */
  charClass(flags) {
    const source = this.source;
    const negate = source.match("^");
    /** @type {Array<[number, number]>} */
    const ranges = [];
    /** @type {string[]} */
    const classes = []; // \d \w \s inside the class
    /** @type {string[]} */
    const negated = []; // \D \W \S inside the class
    let empty = true;
    for (;;) {
      const c = source.get();
      if (c === null) throw new PatternError("unterminated character set");
      if (c === "]" && !empty) break;
      empty = false;
      const item = c[0] === "\\" ? this.classEscape(c) : cp(c);
      if (source.match("-")) {
        const d = source.get();
        if (d === null) throw new PatternError("unterminated character set");
        if (d === "]") {
          this.addClassItem(item, ranges, classes, negated);
          ranges.push([0x2d, 0x2d]);
          break;
        }
        const end = d[0] === "\\" ? this.classEscape(d) : cp(d);
        if (typeof item !== "number" || typeof end !== "number" || end < item) throw new PatternError(`bad character range ${c}-${d}`);
        ranges.push([item, end]);
      } else {
        this.addClassItem(item, ranges, classes, negated);
      }
    }
    if (flags.i && ranges.some(([lo, hi]) => I_FAMILY.some((code) => lo <= code && code <= hi))) for (const code of I_FAMILY) ranges.push([code, code]);
    const members = ranges.map(([lo, hi]) => (lo === hi ? lit(lo) : `${lit(lo)}-${lit(hi)}`)).join("") + classes.join("");
    const parts = /** @type {string[]} */ ([members ? `[${members}]` : null, ...negated].filter(Boolean));
    const union = parts.length === 1 ? parts[0] : `(?:${parts.join("|")})`;
    const src = negate ? (parts.length ? `(?:(?!${union})${ANY})` : ANY) : parts.length ? union : "[]";
    return { src, lo: 1, hi: 1, kind: "unit" };
  }

  /** @param {ClassItem} item @param {Array<[number, number]>} ranges @param {string[]} classes @param {string[]} negated */
  addClassItem(item, ranges, classes, negated) {
    if (typeof item === "number") ranges.push([item, item]);
    else if (item.negated) negated.push(item.src);
    else classes.push(item.src);
  }

  /** `\x` inside a class: a code point, or {src, negated} for \d \D \s \S \w \W @param {string} c @returns {ClassItem} */
  classEscape(c) {
    const source = this.source;
    const letter = c[1];
    const category = /** @type {Record<string, [string, boolean] | undefined>} */ ({ "\\d": ["\\p{Nd}", false], "\\D": ["\\P{Nd}", false], "\\s": [PY_SPACE, false], "\\w": [PY_WORD, false], "\\S": [`[^${PY_SPACE}]`, true], "\\W": [`[^${PY_WORD}]`, true] })[c];
    if (category) return { src: category[0], negated: category[1] };
    if (c === "\\b") return 0x08;
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return simple;
    if (letter === "x" || letter === "u" || letter === "U" || letter === "N") return this.codeEscape(c);
    if (OCTAL.test(letter)) {
      const digits = letter + source.getWhile(2, OCTAL);
      const code = parseInt(digits, 8);
      if (code > 0o377) throw new PatternError(`octal escape value \\${digits} outside of range 0-0o377`);
      return code;
    }
    if (DIGITS.test(letter) || ASCII_LETTERS.test(letter)) throw new PatternError(`bad escape ${c}`);
    return cp(letter);
  }
}

/** @type {Record<string, number | undefined>} */
const SIMPLE_ESCAPES = { "\\a": 0x07, "\\f": 0x0c, "\\n": 0x0a, "\\r": 0x0d, "\\t": 0x09, "\\v": 0x0b, "\\\\": 0x5c };

/**
 * The RegExp that behaves as Python's `re.compile(pattern, re.IGNORECASE if ignoreCase else 0)` on str values.
 * Throws PatternError (Python rejects it) or UnsupportedPattern (only the notebook can run it).
 * @param {string} pattern @param {boolean} ignoreCase
 */
export function pythonRegExp(pattern, ignoreCase) {
  const { source, flags } = new Translator(pattern, ignoreCase).translate();
  try {
    return new RegExp(source, flags);
  } catch (error) {
    // The translation is meant to be valid JavaScript for every pattern Python accepts; say so if it is not.
    throw new UnsupportedPattern(`this pattern (${String(/** @type {Error} */ (error).message)})`);
  }
}

/** A literal search (Python's `re.escape(text)`), with Python's case rules. @param {string} text @param {boolean} ignoreCase */
export function literalRegExp(text, ignoreCase) {
  const flags = { i: ignoreCase };
  const src = Array.from(text)
    .map((c) => (ignoreCase && I_FAMILY.includes(cp(c)) ? `[${I_FAMILY.map(lit).join("")}]` : lit(cp(c))))
    .join("");
  return new RegExp(src, flags.i ? "iu" : "u");
}

/** Python's repr() of a str (for messages that quote the user's input as Python does). @param {string} text */
export function pyRepr(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const c of text) {
    const code = cp(c);
    if (c === quote || c === "\\") out += `\\${c}`;
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (c !== " " && /[\p{C}\p{Z}]/u.test(c)) {
      out += code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : code < 0x10000 ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
    } else out += c;
  }
  return out + quote;
}

const SPACE_RE = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "gu");
/** Python's str.strip() (its whitespace, not JavaScript's). @param {string} text */
export function pyStrip(text) {
  return text.replace(SPACE_RE, "");
}

