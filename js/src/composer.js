// @ts-check
// The event composer: at the cursor, the events the state accepts (and what is in flight or armed), a form for
// the chosen event's fields, a dry run from Python before sending, and Send (Python forks if needed, appends
// and moves the view there). Draws the `composer` traitlet; sends {kind: "composer" | "compose-check" |
// "compose-send"}. Everything from the log or the schema is drawn as text or attribute values.

import { debounce, h, replace } from "./dom.js";

/** @type {Record<string, string>} */
const KIND_LABEL = { done: "completes", error: "fails", timer: "timer", event: "event" };
const SENT_TEXT_CAP = 240;

/** @typedef {import("./protocol").ChoiceView} ChoiceView */
/** @typedef {import("./protocol").FieldView} FieldView */
/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} FieldInput  a field's form control */

/** @param {FieldView} field @param {unknown} value  the template's value, if any @returns {FieldInput} */
function fieldInput(field, value) {
  const id = `ae-f-${field.name}`;
  if (field.enum?.length) {
    const select = h("select", { class: "ae-input", "data-field": field.name, "aria-label": field.name, id }, field.enum.map((option) => h("option", { value: JSON.stringify(option) }, String(option))));
    select.value = JSON.stringify(value ?? field.enum[0]);
    return select;
  }
  if (field.type === "boolean") return h("input", { type: "checkbox", "data-field": field.name, "aria-label": field.name, id, checked: value ? true : null });
  if (field.type === "string") return h("input", { class: "ae-input", type: "text", "data-field": field.name, "aria-label": field.name, id, value: value ?? "" });
  if (field.type === "integer" || field.type === "number") return h("input", { class: "ae-input", type: "number", "data-field": field.name, "aria-label": field.name, id, value: value ?? "" });
  const area = h("textarea", { class: "ae-input ae-json-input", rows: 3, spellcheck: "false", "data-field": field.name, "aria-label": `${field.name} (JSON)`, id });
  area.value = JSON.stringify(value ?? null, null, 1);
  return area;
}

/** The event the form describes, or {error} when a JSON field does not parse.
 *  @param {ChoiceView} choice @param {Array<[FieldView, FieldInput]>} inputs */
function readForm(choice, inputs) {
  /** @type {Record<string, unknown>} */
  const event = { type: choice.type };
  for (const [field, input] of inputs) {
    if (field.enum?.length) event[field.name] = JSON.parse(input.value);
    else if (field.type === "boolean") event[field.name] = /** @type {HTMLInputElement} a checkbox */ (input).checked;
    else if (field.type === "string") {
      if (input.value !== "" || field.required) event[field.name] = input.value;
    } else if (field.type === "integer" || field.type === "number") {
      if (input.value !== "") event[field.name] = Number(input.value);
    } else {
      try {
        event[field.name] = JSON.parse(input.value);
      } catch (error) {
        return { error: `${field.name}: not valid JSON (${error instanceof Error ? error.message : String(error)})` };
      }
    }
  }
  return { event };
}

export class ComposerPanel {
  /** @param {import("./protocol").Model} model */
  constructor(model) {
    this.model = model;
    this.open = false;
    /** @type {string | null} */
    this.chosen = null; // the chosen event type
    /** @type {Array<[FieldView, FieldInput]>} */
    this.inputs = [];
    this.nonce = 0;
    this.choicesEl = h("div", { class: "ae-choices", "data-testid": "composer-choices" });
    this.formEl = h("div", { class: "ae-compose-form", "data-testid": "composer-form" });
    this.title = h("span", { class: "ae-muted", "data-testid": "composer-where" });
    this.toggle = h("button", { class: "ae-btn ae-btn-small", "data-testid": "composer-toggle", "aria-expanded": "false", onclick: () => this.setOpen(!this.open) }, "Compose event…");
    this.sentEl = h("div", { class: "ae-compose-sent", "data-testid": "composer-sent", role: "status" });
    this.body = h("div", { class: "ae-composer-body", hidden: true }, this.sentEl, this.choicesEl, this.formEl);
    this.el = h("section", { class: "ae-panel ae-composer", "data-testid": "composer" }, h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "What if"), this.toggle, this.title), this.body);
    this.check = debounce(() => this.send("compose-check"), 250);
  }

  /** @param {boolean} open */
  setOpen(open) {
    this.open = open;
    this.body.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    this.toggle.textContent = open ? "Close" : "Compose event…";
    this.model.send({ kind: "composer", open });
    clearTimeout(this.waiting);
    this.answered = false;
    if (!open) replace(this.title);
    else {
      replace(this.title, "asking the kernel…");
      // A static export (to_html) or a dead kernel never answers: say so instead of waiting forever (an exported
      // page may carry the composer's last payload, but nothing there can append or move to a branch).
      this.waiting = setTimeout(() => {
        if (this.open && !this.answered) {
          replace(this.title, "composing needs a running kernel (this view has none)");
          replace(this.choicesEl);
          replace(this.formEl);
        }
      }, 3000);
    }
  }

  /** @param {"compose-check" | "compose-send"} kind  a dry run or the real thing */
  send(kind) {
    const choice = this.choice();
    if (!choice) return;
    const read = readForm(choice, this.inputs);
    if (read.error) {
      this.drawCheck({ ok: false, error: read.error, fields: [] });
      return;
    }
    this.nonce += 1;
    this.pending = this.nonce;
    this.model.send({ kind, event: /** @type {Record<string, unknown>} no error: read */ (read.event), nonce: this.nonce });
  }

  choice() {
    const c = this.model.get("composer");
    return (c.choices || []).find((x) => x.type === this.chosen) || null;
  }

  /** @param {import("./protocol").Traits["composer"]} c */
  draw(c) {
    if (!this.open) return;
    this.answered = true;
    c = c || {};
    if (c.error) {
      replace(this.title, c.error);
      return;
    }
    const where = c.appendsTo ? `appends to ${c.appendsTo}` : "forks a new branch after this index";
    replace(this.title, ` at index ${c.index ?? "?"} · `, h("code", {}, c.state ?? ""), c.status && c.status !== "active" ? ` (${c.status})` : "", ` · sending ${where}`);
    const choices = c.choices || [];
    this.decisions = c.decisions || [];
    const sent = c.sent && this.sentShown !== c.sent.nonce ? c.sent : null;
    if (sent) {
      // Sent: the form starts over at the new index (no event chosen, no check of the one just sent).
      this.chosen = null;
      this.pending = null;
      this.check.cancel();
      /** @type {number | undefined} the index the choices were drawn for */
      this.choicesIndex = undefined;
      this.sentAt = { line: sent.line, index: sent.index };
    }
    if (this.sentAt && (this.sentAt.line !== c.line || this.sentAt.index !== c.index)) {
      this.sentAt = null; // the note belongs to the position it was sent from
      replace(this.sentEl);
    }
    if (this.choicesIndex !== c.index || this.choicesLine !== c.line) {
      // A new position: the choices may differ, so the form starts over.
      this.choicesIndex = c.index;
      this.choicesLine = c.line;
      if (!choices.some((x) => x.type === this.chosen)) this.chosen = null;
      this.drawChoices(choices);
      this.drawForm();
    } else {
      this.drawChoices(choices);
    }
    if (c.check && c.check.nonce === this.pending) this.drawCheck(c.check);
    if (sent) {
      /** @type {unknown} the nonce of the sent note on view, so it is drawn once */
      this.sentShown = sent.nonce;
      let sentText = sent.event === undefined ? "" : JSON.stringify(sent.event);
      if (sentText.length > SENT_TEXT_CAP) sentText = `${sentText.slice(0, SENT_TEXT_CAP - 1)}…`;
      replace(
        this.sentEl,
        h("span", { class: `ae-chip ${sent.ignored ? "pending" : "ok"}` }, sent.ignored ? "sent, ignored" : "sent"),
        " ",
        `${sent.message} · now viewing ${sent.line}, index ${sent.index}`,
        sentText ? h("code", { class: "ae-compose-sent-event", "data-testid": "composer-sent-event", title: sentText }, sentText) : null,
      );
    }
  }

  /** @param {Array<import("./protocol").ChoiceView>} choices */
  drawChoices(choices) {
    /** @param {ChoiceView} x */
    const button = (x) =>
      h(
        "button",
        {
          class: `ae-choice ${x.enabled ? "" : "ignored"} ${x.type === this.chosen ? "on" : ""} kind-${x.kind}`,
          title: x.note || (x.enabled ? "accepted in this state" : "ignored in this state"),
          "data-type": x.type,
          "aria-pressed": x.type === this.chosen ? "true" : "false",
          onclick: () => {
            this.chosen = x.type;
            this.drawChoices(choices);
            this.drawForm();
          },
        },
        x.kind !== "event" ? h("span", { class: "ae-choice-kind" }, KIND_LABEL[x.kind] || x.kind) : null,
        h("code", {}, x.type),
        x.enabled ? null : h("span", { class: "ae-choice-ignored" }, "ignored"),
      );
    const pendingWork = choices.filter((x) => x.kind !== "event");
    const accepted = choices.filter((x) => x.kind === "event" && x.enabled);
    const ignored = choices.filter((x) => x.kind === "event" && !x.enabled);
    // A decision in flight has no completion of its own: it completes with the event it picks. Say so, and offer
    // those events (the same choices as below) under its request id.
    const decisions = (this.decisions || []).map((d) => {
      const picks = /** @type {ChoiceView[]} */ ((d.events || []).map((type) => choices.find((x) => x.kind === "event" && x.type === type)).filter(Boolean));
      return h(
        "span",
        { class: "ae-decision", "data-testid": "composer-decision", title: `${d.requestId ?? d.id} is a decision: it completes by sending the event it chooses, journaled as that event` },
        h("span", { class: "ae-choice-kind" }, "decides"),
        h("code", {}, d.requestId ?? d.id),
        picks.length ? " by sending " : " (no legal event to choose here)",
        picks.map(button),
      );
    });
    /** @param {string} label @param {ChoiceView[]} list @param {HTMLElement[]} [extra] */
    const group = (label, list, extra = []) => (list.length || extra.length ? h("div", { class: "ae-choice-group" }, h("span", { class: "ae-section-label" }, label), h("div", { class: "ae-chips" }, extra, list.map(button))) : null);
    replace(this.choicesEl, group("in flight and armed", pendingWork, decisions), group("accepted here", accepted), group("ignored here", ignored), choices.length ? null : h("div", { class: "ae-muted" }, "this machine declares no events"));
  }

  drawForm() {
    const choice = this.choice();
    this.inputs = [];
    if (!choice) {
      const c = this.model.get("composer") || {};
      const next = this.sentAt ? `choose the next event to send at index ${c.index ?? "?"}` : "choose an event to fill in and send";
      replace(this.formEl, h("div", { class: "ae-muted", "data-testid": "composer-empty" }, next));
      this.checkEl = null;
      return;
    }
    const rows = (choice.fields || []).map((field) => {
      const input = fieldInput(field, choice.template?.[field.name]);
      input.addEventListener("input", () => this.check());
      input.addEventListener("change", () => this.check());
      this.inputs.push([field, input]);
      return h("label", { class: "ae-field", for: input.id }, h("span", { class: "ae-field-name" }, field.name, field.required ? h("span", { class: "ae-required", title: "required" }, " *") : null), input, field.description ? h("span", { class: "ae-muted" }, field.description) : null);
    });
    this.checkEl = h("div", { class: "ae-compose-check", "data-testid": "composer-check", role: "status" });
    const sendButton = h("button", { class: "ae-btn", "data-testid": "composer-send", onclick: () => this.send("compose-send") }, "Send");
    replace(
      this.formEl,
      h("div", { class: "ae-compose-head" }, h("code", { class: "ae-type" }, choice.type), choice.note ? h("span", { class: "ae-muted" }, ` · ${choice.note}`) : null),
      rows.length ? h("div", { class: "ae-fields" }, rows) : h("div", { class: "ae-muted" }, "no fields"),
      h("div", { class: "ae-compose-actions" }, sendButton, this.checkEl),
    );
    this.check();
  }

  /** @param {import("./protocol").ComposerCheck} check */
  drawCheck(check) {
    if (!this.checkEl) return;
    for (const [field, input] of this.inputs) input.classList.toggle("invalid", (check.fields || []).includes(field.name));
    if (!check.ok) replace(this.checkEl, h("span", { class: "ae-chip bad" }, "invalid"), " ", check.error || "");
    else if (check.ignored) replace(this.checkEl, h("span", { class: "ae-chip pending" }, "ignored"), " ", check.message || "");
    else replace(this.checkEl, h("span", { class: "ae-chip ok" }, "ok"), " ", check.message || "");
  }
}
