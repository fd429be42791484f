/**
 * The page is built from elements, never from HTML strings: every text goes in through
 * textContent (or a text node), so nothing the server sends can become markup.
 */
type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  /** Attributes; `true` sets an empty one, `false` leaves it out. */
  attrs?: Record<string, string | boolean>;
  onClick?: (event: Event) => void;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value !== false) element.setAttribute(name, value === true ? '' : value);
  }
  if (props.onClick) element.addEventListener('click', props.onClick);
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

let fieldCount = 0;

/** A labelled form field; the label's `for` ties them together for screen readers. */
export function field(label: string, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  input.id ||= `f-${++fieldCount}`;
  return h('div', { class: 'field' }, h('label', { text: label, attrs: { for: input.id } }), input, hint ? h('small', { class: 'hint', text: hint }) : null);
}

/** A form whose submit runs `onSubmit` with its button disabled meanwhile; errors show in it. */
export function form(children: Child[], submitLabel: string, onSubmit: () => Promise<string | null>): HTMLFormElement {
  const error = h('p', { class: 'form-error', attrs: { role: 'alert', hidden: true } });
  const submit = h('button', { class: 'primary', text: submitLabel, attrs: { type: 'submit' } });
  const element = h('form', { attrs: { novalidate: true } }, ...children, error, submit);
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    void onSubmit()
      .then((message) => {
        if (message === null) return;
        error.textContent = message;
        error.hidden = false;
      })
      .finally(() => {
        submit.disabled = false;
      });
  });
  return element;
}

export interface Question {
  /** The dialog's heading, e.g. `Ban mira?`. */
  question: string;
  detail: string;
  /** The confirming button's text, e.g. `Ban`. */
  confirm: string;
  /** A value to ask for too (a new password); the dialog cannot be confirmed while it is empty. */
  input?: { element: HTMLInputElement; label: string };
  /** Further fields that may be left as they are (a duration, a reason). */
  fields?: Array<{ element: HTMLInputElement | HTMLSelectElement; label: string; hint?: string }>;
}

/**
 * Asks before something that cannot be taken back (a ban, a kick): a small modal dialog of the
 * page's own (never the browser's confirm()); true when it is confirmed.
 */
export function ask({ question, detail, confirm, input, fields = [] }: Question): Promise<boolean> {
  const yes = h('button', { class: 'primary', text: confirm, attrs: { type: 'submit', value: 'yes' } });
  const cancel = h('button', { class: 'ghost', text: 'Cancel', attrs: { type: 'button' } });
  if (input) input.element.required = true;
  const body = h(
    'form',
    { attrs: { method: 'dialog' } },
    h('p', { text: detail }),
    input ? field(input.label, input.element) : null,
    ...fields.map((f) => field(f.label, f.element, f.hint)),
    h('div', { class: 'ask-buttons' }, cancel, yes),
  );
  const dialog = h('dialog', { class: 'ask', attrs: { 'aria-label': question } }, h('h2', { text: question }), body);
  cancel.addEventListener('click', () => dialog.close());
  document.body.append(dialog);
  dialog.showModal();
  (input?.element ?? fields[0]?.element ?? yes).focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'yes');
    });
  });
}
