// Built by scripts/build-play.ts from web/: edit those sources, then run `npm run play`.

// node_modules/openapi-fetch/dist/index.mjs
var PATH_PARAM_RE = /\{[^{}]+\}/g;
var supportsRequestInitExt = () => {
  return typeof process === "object" && Number.parseInt(process?.versions?.node?.substring(0, 2)) >= 18 && process.versions.undici;
};
function randomID() {
  return Math.random().toString(36).slice(2, 11);
}
function createClient(clientOptions) {
  let {
    baseUrl = "",
    Request: CustomRequest = globalThis.Request,
    fetch: baseFetch = globalThis.fetch,
    querySerializer: globalQuerySerializer,
    bodySerializer: globalBodySerializer,
    pathSerializer: globalPathSerializer,
    headers: baseHeaders,
    requestInitExt = void 0,
    ...baseOptions
  } = { ...clientOptions };
  requestInitExt = supportsRequestInitExt() ? requestInitExt : void 0;
  baseUrl = removeTrailingSlash(baseUrl);
  const globalMiddlewares = [];
  async function coreFetch(schemaPath, fetchOptions) {
    const {
      baseUrl: localBaseUrl,
      fetch = baseFetch,
      Request = CustomRequest,
      headers,
      params = {},
      parseAs = "json",
      querySerializer: requestQuerySerializer,
      bodySerializer = globalBodySerializer ?? defaultBodySerializer,
      pathSerializer: requestPathSerializer,
      body,
      middleware: requestMiddlewares = [],
      ...init
    } = fetchOptions || {};
    let finalBaseUrl = baseUrl;
    if (localBaseUrl) {
      finalBaseUrl = removeTrailingSlash(localBaseUrl) ?? baseUrl;
    }
    let querySerializer = typeof globalQuerySerializer === "function" ? globalQuerySerializer : createQuerySerializer(globalQuerySerializer);
    if (requestQuerySerializer) {
      querySerializer = typeof requestQuerySerializer === "function" ? requestQuerySerializer : createQuerySerializer({
        ...typeof globalQuerySerializer === "object" ? globalQuerySerializer : {},
        ...requestQuerySerializer
      });
    }
    const pathSerializer = requestPathSerializer || globalPathSerializer || defaultPathSerializer;
    const serializedBody = body === void 0 ? void 0 : bodySerializer(
      body,
      // Note: we declare mergeHeaders() both here and below because it’s a bit of a chicken-or-egg situation:
      // bodySerializer() needs all headers so we aren’t dropping ones set by the user, however,
      // the result of this ALSO sets the lowest-priority content-type header. So we re-merge below,
      // setting the content-type at the very beginning to be overwritten.
      // Lastly, based on the way headers work, it’s not a simple “present-or-not” check becauase null intentionally un-sets headers.
      mergeHeaders(baseHeaders, headers, params.header)
    );
    const finalHeaders = mergeHeaders(
      // with no body, we should not to set Content-Type
      serializedBody === void 0 || // if serialized body is FormData; browser will correctly set Content-Type & boundary expression
      serializedBody instanceof FormData ? {} : {
        "Content-Type": "application/json"
      },
      baseHeaders,
      headers,
      params.header
    );
    const finalMiddlewares = [...globalMiddlewares, ...requestMiddlewares];
    const requestInit = {
      redirect: "follow",
      ...baseOptions,
      ...init,
      body: serializedBody,
      headers: finalHeaders
    };
    let id;
    let options;
    let request = new Request(
      createFinalURL(schemaPath, { baseUrl: finalBaseUrl, params, querySerializer, pathSerializer }),
      requestInit
    );
    let response;
    for (const key in init) {
      if (!(key in request)) {
        request[key] = init[key];
      }
    }
    if (finalMiddlewares.length) {
      id = randomID();
      options = Object.freeze({
        baseUrl: finalBaseUrl,
        fetch,
        parseAs,
        querySerializer,
        bodySerializer,
        pathSerializer
      });
      for (const m of finalMiddlewares) {
        if (m && typeof m === "object" && typeof m.onRequest === "function") {
          const result = await m.onRequest({
            request,
            schemaPath,
            params,
            options,
            id
          });
          if (result) {
            if (result instanceof Request) {
              request = result;
            } else if (result instanceof Response) {
              response = result;
              break;
            } else {
              throw new Error("onRequest: must return new Request() or Response() when modifying the request");
            }
          }
        }
      }
    }
    if (!response) {
      try {
        response = await fetch(request, requestInitExt);
      } catch (error2) {
        let errorAfterMiddleware = error2;
        if (finalMiddlewares.length) {
          for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
            const m = finalMiddlewares[i];
            if (m && typeof m === "object" && typeof m.onError === "function") {
              const result = await m.onError({
                request,
                error: errorAfterMiddleware,
                schemaPath,
                params,
                options,
                id
              });
              if (result) {
                if (result instanceof Response) {
                  errorAfterMiddleware = void 0;
                  response = result;
                  break;
                }
                if (result instanceof Error) {
                  errorAfterMiddleware = result;
                  continue;
                }
                throw new Error("onError: must return new Response() or instance of Error");
              }
            }
          }
        }
        if (errorAfterMiddleware) {
          throw errorAfterMiddleware;
        }
      }
      if (finalMiddlewares.length) {
        for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
          const m = finalMiddlewares[i];
          if (m && typeof m === "object" && typeof m.onResponse === "function") {
            const result = await m.onResponse({
              request,
              response,
              schemaPath,
              params,
              options,
              id
            });
            if (result) {
              if (!(result instanceof Response)) {
                throw new Error("onResponse: must return new Response() when modifying the response");
              }
              response = result;
            }
          }
        }
      }
    }
    const contentLength = response.headers.get("Content-Length");
    if (response.status === 204 || request.method === "HEAD" || contentLength === "0" && !response.headers.get("Transfer-Encoding")?.includes("chunked")) {
      return response.ok ? { data: void 0, response } : { error: void 0, response };
    }
    if (response.ok) {
      const getResponseData = async () => {
        if (parseAs === "stream") {
          return response.body;
        }
        if (parseAs === "json" && !contentLength) {
          const raw = await response.text();
          return raw ? JSON.parse(raw) : void 0;
        }
        return await response[parseAs]();
      };
      return { data: await getResponseData(), response };
    }
    let error = await response.text();
    try {
      error = JSON.parse(error);
    } catch {
    }
    return { error, response };
  }
  return {
    request(method, url, init) {
      return coreFetch(url, { ...init, method: method.toUpperCase() });
    },
    /** Call a GET endpoint */
    GET(url, init) {
      return coreFetch(url, { ...init, method: "GET" });
    },
    /** Call a PUT endpoint */
    PUT(url, init) {
      return coreFetch(url, { ...init, method: "PUT" });
    },
    /** Call a POST endpoint */
    POST(url, init) {
      return coreFetch(url, { ...init, method: "POST" });
    },
    /** Call a DELETE endpoint */
    DELETE(url, init) {
      return coreFetch(url, { ...init, method: "DELETE" });
    },
    /** Call a OPTIONS endpoint */
    OPTIONS(url, init) {
      return coreFetch(url, { ...init, method: "OPTIONS" });
    },
    /** Call a HEAD endpoint */
    HEAD(url, init) {
      return coreFetch(url, { ...init, method: "HEAD" });
    },
    /** Call a PATCH endpoint */
    PATCH(url, init) {
      return coreFetch(url, { ...init, method: "PATCH" });
    },
    /** Call a TRACE endpoint */
    TRACE(url, init) {
      return coreFetch(url, { ...init, method: "TRACE" });
    },
    /** Register middleware */
    use(...middleware) {
      for (const m of middleware) {
        if (!m) {
          continue;
        }
        if (typeof m !== "object" || !("onRequest" in m || "onResponse" in m || "onError" in m)) {
          throw new Error("Middleware must be an object with one of `onRequest()`, `onResponse() or `onError()`");
        }
        globalMiddlewares.push(m);
      }
    },
    /** Unregister middleware */
    eject(...middleware) {
      for (const m of middleware) {
        const i = globalMiddlewares.indexOf(m);
        if (i !== -1) {
          globalMiddlewares.splice(i, 1);
        }
      }
    }
  };
}
function serializePrimitiveParam(name, value, options) {
  if (value === void 0 || value === null) {
    return "";
  }
  if (typeof value === "object") {
    throw new Error(
      "Deeply-nested arrays/objects aren’t supported. Provide your own `querySerializer()` to handle these."
    );
  }
  return `${name}=${options?.allowReserved === true ? value : encodeURIComponent(value)}`;
}
function serializeObjectParam(name, value, options) {
  if (!value || typeof value !== "object") {
    return "";
  }
  const values = [];
  const joiner = {
    simple: ",",
    label: ".",
    matrix: ";"
  }[options.style] || "&";
  if (options.style !== "deepObject" && options.explode === false) {
    for (const k in value) {
      values.push(k, options.allowReserved === true ? value[k] : encodeURIComponent(value[k]));
    }
    const final2 = values.join(",");
    switch (options.style) {
      case "form": {
        return `${name}=${final2}`;
      }
      case "label": {
        return `.${final2}`;
      }
      case "matrix": {
        return `;${name}=${final2}`;
      }
      default: {
        return final2;
      }
    }
  }
  for (const k in value) {
    const finalName = options.style === "deepObject" ? `${name}[${k}]` : k;
    values.push(serializePrimitiveParam(finalName, value[k], options));
  }
  const final = values.join(joiner);
  return options.style === "label" || options.style === "matrix" ? `${joiner}${final}` : final;
}
function serializeArrayParam(name, value, options) {
  if (!Array.isArray(value)) {
    return "";
  }
  if (options.explode === false) {
    const joiner2 = { form: ",", spaceDelimited: "%20", pipeDelimited: "|" }[options.style] || ",";
    const final = (options.allowReserved === true ? value : value.map((v) => encodeURIComponent(v))).join(joiner2);
    switch (options.style) {
      case "simple": {
        return final;
      }
      case "label": {
        return `.${final}`;
      }
      case "matrix": {
        return `;${name}=${final}`;
      }
      // case "spaceDelimited":
      // case "pipeDelimited":
      default: {
        return `${name}=${final}`;
      }
    }
  }
  const joiner = { simple: ",", label: ".", matrix: ";" }[options.style] || "&";
  const values = [];
  for (const v of value) {
    if (options.style === "simple" || options.style === "label") {
      values.push(options.allowReserved === true ? v : encodeURIComponent(v));
    } else {
      values.push(serializePrimitiveParam(name, v, options));
    }
  }
  return options.style === "label" || options.style === "matrix" ? `${joiner}${values.join(joiner)}` : values.join(joiner);
}
function createQuerySerializer(options) {
  return function querySerializer(queryParams) {
    const search = [];
    if (queryParams && typeof queryParams === "object") {
      for (const name in queryParams) {
        const value = queryParams[name];
        if (value === void 0 || value === null) {
          continue;
        }
        if (Array.isArray(value)) {
          if (value.length === 0) {
            continue;
          }
          search.push(
            serializeArrayParam(name, value, {
              style: "form",
              explode: true,
              ...options?.array,
              allowReserved: options?.allowReserved || false
            })
          );
          continue;
        }
        if (typeof value === "object") {
          search.push(
            serializeObjectParam(name, value, {
              style: "deepObject",
              explode: true,
              ...options?.object,
              allowReserved: options?.allowReserved || false
            })
          );
          continue;
        }
        search.push(serializePrimitiveParam(name, value, options));
      }
    }
    return search.join("&");
  };
}
function defaultPathSerializer(pathname, pathParams) {
  let nextURL = pathname;
  for (const match of pathname.match(PATH_PARAM_RE) ?? []) {
    let name = match.substring(1, match.length - 1);
    let explode = false;
    let style = "simple";
    if (name.endsWith("*")) {
      explode = true;
      name = name.substring(0, name.length - 1);
    }
    if (name.startsWith(".")) {
      style = "label";
      name = name.substring(1);
    } else if (name.startsWith(";")) {
      style = "matrix";
      name = name.substring(1);
    }
    if (!pathParams || pathParams[name] === void 0 || pathParams[name] === null) {
      continue;
    }
    const value = pathParams[name];
    if (Array.isArray(value)) {
      nextURL = nextURL.replace(match, serializeArrayParam(name, value, { style, explode }));
      continue;
    }
    if (typeof value === "object") {
      nextURL = nextURL.replace(match, serializeObjectParam(name, value, { style, explode }));
      continue;
    }
    if (style === "matrix") {
      nextURL = nextURL.replace(match, `;${serializePrimitiveParam(name, value)}`);
      continue;
    }
    nextURL = nextURL.replace(match, style === "label" ? `.${encodeURIComponent(value)}` : encodeURIComponent(value));
  }
  return nextURL;
}
function defaultBodySerializer(body, headers) {
  if (body instanceof FormData) {
    return body;
  }
  if (headers) {
    const contentType = headers.get instanceof Function ? headers.get("Content-Type") ?? headers.get("content-type") : headers["Content-Type"] ?? headers["content-type"];
    if (contentType === "application/x-www-form-urlencoded") {
      return new URLSearchParams(body).toString();
    }
  }
  return JSON.stringify(body);
}
function createFinalURL(pathname, options) {
  let finalURL = `${options.baseUrl}${pathname}`;
  if (options.params?.path) {
    finalURL = options.pathSerializer(finalURL, options.params.path);
  }
  let search = options.querySerializer(options.params.query ?? {});
  if (search.startsWith("?")) {
    search = search.substring(1);
  }
  if (search) {
    finalURL += `?${search}`;
  }
  return finalURL;
}
function mergeHeaders(...allHeaders) {
  const finalHeaders = new Headers();
  for (const h2 of allHeaders) {
    if (!h2 || typeof h2 !== "object") {
      continue;
    }
    const iterator = h2 instanceof Headers ? h2.entries() : Object.entries(h2);
    for (const [k, v] of iterator) {
      if (v === null) {
        finalHeaders.delete(k);
      } else if (Array.isArray(v)) {
        for (const v2 of v) {
          finalHeaders.append(k, v2);
        }
      } else if (v !== void 0) {
        finalHeaders.set(k, v);
      }
    }
  }
  return finalHeaders;
}
function removeTrailingSlash(url) {
  if (url.endsWith("/")) {
    return url.substring(0, url.length - 1);
  }
  return url;
}

// web/api.ts
var api = createClient({ baseUrl: location.origin });
var STORAGE_KEY = "mud-play-session";
var current = null;
var onSessionLost = () => {
};
api.use({
  onRequest({ request }) {
    if (current) request.headers.set("Authorization", `Bearer ${current.id}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has("Authorization")) onSessionLost("Your session has ended. Please log in again.");
    return response;
  }
});
function whenSessionLost(handler) {
  onSessionLost = handler;
}
function session() {
  if (current) return current;
  const stored2 = sessionStorage.getItem(STORAGE_KEY);
  if (stored2) current = JSON.parse(stored2);
  return current;
}
function saveSession(value) {
  current = value;
  if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(STORAGE_KEY);
}
async function call(request) {
  try {
    const { data, error, response } = await request;
    if (response.ok && data !== void 0) return { ok: true, data };
    return { ok: false, status: response.status, detail: error?.detail ?? `The server answered ${response.status}.` };
  } catch {
    return { ok: false, status: 0, detail: "The server cannot be reached." };
  }
}
function eventsUrl(sessionId) {
  const path = "/events/{session_id}";
  return path.replace("{session_id}", encodeURIComponent(sessionId));
}

// web/dom.ts
function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.text !== void 0) element.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value !== false) element.setAttribute(name, value === true ? "" : value);
  }
  if (props.onClick) element.addEventListener("click", props.onClick);
  append(element, ...children);
  return element;
}
function append(parent, ...children) {
  for (const child of children) {
    if (child === null || child === void 0 || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}
var fieldCount = 0;
function field(label, input2, hint) {
  input2.id ||= `f-${++fieldCount}`;
  return h("div", { class: "field" }, h("label", { text: label, attrs: { for: input2.id } }), input2, hint ? h("small", { class: "hint", text: hint }) : null);
}
function form(children, submitLabel, onSubmit) {
  const error = h("p", { class: "form-error", attrs: { role: "alert", hidden: true } });
  const submit = h("button", { class: "primary", text: submitLabel, attrs: { type: "submit" } });
  const element = h("form", { attrs: { novalidate: true } }, ...children, error, submit);
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    void onSubmit().then((message) => {
      if (message === null) return;
      error.textContent = message;
      error.hidden = false;
    }).finally(() => {
      submit.disabled = false;
    });
  });
  return element;
}
function ask({ question, detail, confirm, input: input2, fields = [] }) {
  const yes = h("button", { class: "primary", text: confirm, attrs: { type: "submit", value: "yes" } });
  const cancel = h("button", { class: "ghost", text: "Cancel", attrs: { type: "button" } });
  if (input2) input2.element.required = true;
  const body = h(
    "form",
    { attrs: { method: "dialog" } },
    h("p", { text: detail }),
    input2 ? field(input2.label, input2.element) : null,
    ...fields.map((f) => field(f.label, f.element, f.hint)),
    h("div", { class: "ask-buttons" }, cancel, yes)
  );
  const dialog = h("dialog", { class: "ask", attrs: { "aria-label": question } }, h("h2", { text: question }), body);
  cancel.addEventListener("click", () => dialog.close());
  document.body.append(dialog);
  dialog.showModal();
  (input2?.element ?? fields[0]?.element ?? yes).focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "yes");
    });
  });
}

// src/shared/name-match.ts
var fold = (text) => text.normalize("NFC").trim().replace(/\s+/g, " ").toLowerCase();
function startsName(name, typed) {
  const wanted = fold(typed);
  if (wanted === "") return false;
  const whole = fold(name);
  if (whole.startsWith(wanted)) return true;
  for (let i = 0; i < whole.length; i++) {
    if (/[\s'\u2019-]/.test(whole[i]) && whole.startsWith(wanted, i + 1)) return true;
  }
  return false;
}

// src/shared/event-text.ts
var ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'" };
function decodeEntities(text) {
  return text.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (entity) => ENTITIES[entity]);
}
var SPEAKER_MARK = { npc: "NPC", world: "Room" };
function chatText(line) {
  const said = line.action ? line.text : `${line.speaker}: ${line.text}`;
  return line.mark === null ? said : `[${line.mark}] ${said}`;
}
function chatLine(message, me) {
  const mine = message.speaker === void 0 && message.sender === me;
  let text = message.text;
  let speaker;
  if (message.channel === "emote") {
    speaker = message.sender;
  } else if (message.channel === "ooc") {
    text = stripPrefix(text, "[OOC] ");
    speaker = mine ? "You (OOC)" : `${message.sender} (OOC)`;
  } else if (message.channel === "tell") {
    text = stripPrefix(text, `[TELL: ${message.sender} → ${message.recipient ?? ""}] `);
    speaker = mine ? `You tell ${message.recipient ?? "someone"}` : `${message.sender} tells you`;
  } else if (message.channel === "yell") {
    text = stripPrefix(text, "[YELL] ");
    speaker = mine ? "You yell" : `${message.sender} yells`;
  } else if (message.channel === "whisper") {
    text = stripPrefix(text, `[WHISPER: ${message.sender} → ${message.recipient ?? ""}] `);
    const to = message.recipient === me ? "you" : message.recipient ?? "someone";
    speaker = mine ? `You whisper to ${to}` : `${message.sender} whispers to ${to}`;
  } else {
    speaker = mine ? "You say" : `${message.sender} says`;
  }
  const mark = message.speaker === void 0 ? null : SPEAKER_MARK[message.speaker];
  return { channel: message.channel, speaker, text: decodeEntities(text), action: message.channel === "emote", mine, mark };
}
function stripPrefix(text, prefix) {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}
var OPPOSITE = { north: "the south", south: "the north", east: "the west", west: "the east", up: "below", down: "above" };
function movementLine(kind, character, direction, cause) {
  if (kind === "arrive") {
    if (cause === "walk" && direction) return `${character} arrives from ${OPPOSITE[direction] ?? direction}.`;
    return cause === "login" ? `${character} steps into the world.` : `${character} appears.`;
  }
  if (cause === "walk" && direction) return `${character} leaves ${direction}.`;
  return cause === "logout" ? `${character} leaves the world.` : `${character} vanishes.`;
}
function itemLine(event) {
  switch (event.action) {
    case "take":
      return `${event.character} picks up the ${event.item}.`;
    case "drop":
      return `${event.character} drops the ${event.item}.`;
    case "appear":
      return `The ${event.item} appears.`;
    case "vanish":
      return `The ${event.item} vanishes.`;
  }
}
function announcementLine(event) {
  return `[Staff announcement] ${event.from}: ${decodeEntities(event.text)}`;
}
var END_TEXT = {
  kick: "An administrator ended your session.",
  ban: "Your account has been banned: it is deactivated, and cannot log in until staff unban it.",
  deleted: "Your account has been deleted.",
  logout: "You were logged out (from another window?).",
  expiry: "Your session expired.",
  password_change: "Your password was changed: log in with the new one.",
  replaced: "This session was taken over by another connection.",
  shutdown: "The server shut down.",
  lagging: "The connection could not keep up."
};

// web/text.ts
var LIST_ITEM = /^ {2}- (.*)$/;
function listEntries(text) {
  return text.split("\n").flatMap((line) => {
    const entry = LIST_ITEM.exec(line);
    return entry ? [entry[1]] : [];
  });
}
function completions(input2, context) {
  const first = /^(\/?)(\S*)$/.exec(input2);
  if (first) {
    const [, slash, word] = first;
    const required = new Set(context.commands.filter((c) => c.argument?.required).map((c) => c.name));
    const verbs = unique([...context.exits, ...context.commands.map((c) => c.name)]).filter((verb2) => startsWith(verb2, word));
    return verbs.map((verb2) => `${slash}${verb2}${required.has(verb2) ? " " : ""}`);
  }
  const [, head, rawVerb, rest] = /^(\/?(\S+)\s+)(.*)$/s.exec(input2);
  const verb = rawVerb.toLowerCase();
  const whole = (names, after) => unique(names).filter((name) => startsName(name, rest) || rest.trim() === "").map((name) => `${head}${name}${after}`);
  switch (context.commands.find((c) => c.name === verb || c.aliases.includes(verb))?.argument?.kind) {
    case "direction":
      return whole(context.exits, "");
    case "item_here":
      return whole(context.items, "");
    case "item_carried":
      return whole(context.inventory, "");
    case "target":
      return whole([...context.items, ...context.inventory, ...context.people], "");
    case "character":
      return whole(context.people, " ");
    case "message": {
      const cut = rest.lastIndexOf(" ") + 1;
      const word = rest.slice(cut);
      if (word === "") return [];
      return unique(context.people).filter((name) => startsWith(name, word)).map((name) => `${head}${rest.slice(0, cut)}${name}`);
    }
    default:
      return [];
  }
}
function commonPrefix(candidates) {
  if (candidates.length === 0) return "";
  let end = candidates[0].length;
  for (const other of candidates.slice(1)) {
    let i = 0;
    while (i < end && i < other.length && other[i].toLowerCase() === candidates[0][i].toLowerCase()) i++;
    end = i;
  }
  return candidates[0].slice(0, end);
}
function startsWith(name, prefix) {
  return name.toLowerCase().startsWith(prefix.toLowerCase());
}
function unique(names) {
  return [...new Set(names)];
}
var COMMAND_MAX_LENGTH = 2e3;
function readableDetail(detail) {
  const rules = detail.split(/ (?=Password must |Password contains |This password )/);
  if (rules.length < 2) return detail;
  return rules.map((rule) => /[.!?]$/.test(rule) ? rule : `${rule}.`).join("\n");
}
function loginDetail(detail) {
  return detail === "Account is deactivated" ? "Account is deactivated: it is banned, and cannot log in until staff unban it." : detail;
}
function utcDate(stamp) {
  return /* @__PURE__ */ new Date(`${stamp.replace(" ", "T")}Z`);
}
function mentions(text, name) {
  const first = name.split(" ")[0].toLowerCase();
  return text.toLowerCase().split(/[^\p{L}\p{N}'\u2019-]+/u).some((word) => word.replace(/['\u2019]s$/, "") === first);
}

// web/auth.ts
var PASSWORD_HINT = "At least 12 characters; not a common password, no runs like abc or 123, no character 4 times in a row.";
function input(type, autocomplete, extra = {}) {
  return h("input", { attrs: { type, autocomplete, required: true, ...extra } });
}
async function logIn(username, password) {
  const result = await call(api.POST("/login", { params: { header: { "X-Client-Type": "web" } }, body: { username, password } }));
  if (!result.ok) return loginDetail(result.detail);
  const session2 = { id: result.data.session_id, username, role: result.data.role, worlds: result.data.available_worlds };
  saveSession(session2);
  return session2;
}
function loginForm(nav2) {
  const username = input("text", "username", { autocapitalize: "none", spellcheck: "false" });
  const password = input("password", "current-password");
  return form([field("Username", username), field("Password", password)], "Log in", async () => {
    const session2 = await logIn(username.value.trim(), password.value);
    if (typeof session2 === "string") return session2;
    nav2.lobby();
    return null;
  });
}
function registerForm(nav2) {
  const username = input("text", "username", { autocapitalize: "none", spellcheck: "false" });
  const password = input("password", "new-password");
  const confirm = input("password", "new-password");
  return form(
    [
      h("p", { class: "notice", text: "New accounts last 24 hours, unless an administrator makes yours permanent." }),
      field("Username", username, "2–20 letters, digits, _ . or -"),
      field("Password", password, PASSWORD_HINT),
      field("Repeat the password", confirm)
    ],
    "Create account",
    async () => {
      const body = { username: username.value.trim(), password: password.value, password_confirm: confirm.value };
      const registered = await call(api.POST("/register", { body }));
      if (!registered.ok) return readableDetail(registered.detail);
      const session2 = await logIn(body.username, body.password);
      if (typeof session2 === "string") return session2;
      nav2.lobby();
      return null;
    }
  );
}
function guestForm(nav2) {
  const name = input("text", "off", { spellcheck: "false" });
  const password = input("password", "new-password");
  const confirm = input("password", "new-password");
  return form(
    [
      field("Character name", name, "Letters, spaces, apostrophes and hyphens, e.g. Wren Ashdown."),
      field("Password", password, PASSWORD_HINT),
      field("Repeat the password", confirm)
    ],
    "Play as guest",
    async () => {
      const body = { character_name: name.value.trim(), password: password.value, password_confirm: confirm.value };
      const guest = await call(api.POST("/register-guest", { body }));
      if (!guest.ok) return readableDetail(guest.detail);
      const session2 = await logIn(guest.data.username, body.password);
      if (typeof session2 === "string") return session2;
      const selected = await call(api.POST("/characters/select", { body: { character_id: guest.data.character_id } }));
      if (!selected.ok) return selected.detail;
      saveSession({
        ...session2,
        character: { name: selected.data.character_name, worldId: guest.data.world_id },
        guestNotice: `You play as guest account ${guest.data.username}: note the name to log in again. Guest accounts last 24 hours.`
      });
      nav2.game();
      return null;
    }
  );
}
function authScreen(nav2, notice) {
  const tabs = [
    { id: "login", label: "Log in", panel: loginForm(nav2) },
    { id: "register", label: "New account", panel: registerForm(nav2) },
    { id: "guest", label: "Play as guest", panel: guestForm(nav2) }
  ];
  const tabList = h("div", { class: "tabs", attrs: { role: "tablist", "aria-label": "How to enter" } });
  const panels = tabs.map(({ id, panel }) => h("div", { class: "tab-panel", attrs: { role: "tabpanel", id: `panel-${id}`, "aria-labelledby": `tab-${id}` } }, panel));
  const buttons = tabs.map(({ id, label }, index) => {
    const button = h("button", { text: label, attrs: { type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `panel-${id}` } });
    button.addEventListener("click", () => select(index));
    button.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (step === 0) return;
      event.preventDefault();
      const next = (index + step + tabs.length) % tabs.length;
      select(next);
      buttons[next].focus();
    });
    return button;
  });
  const select = (chosen) => {
    buttons.forEach((button, index) => {
      button.setAttribute("aria-selected", String(index === chosen));
      button.tabIndex = index === chosen ? 0 : -1;
      panels[index].hidden = index !== chosen;
    });
  };
  tabList.append(...buttons);
  select(0);
  const first = panels[0].querySelector("input") ?? buttons[0];
  const element = h(
    "main",
    { class: "auth" },
    h(
      "section",
      { class: "card auth-card" },
      h("h1", { class: "brand" }, h("span", { class: "brand-mark", text: "◆", attrs: { "aria-hidden": "true" } }), " MUD"),
      h("p", { class: "tagline", text: "A text adventure in many worlds: walk, talk and explore with other players." }),
      notice ? h("p", { class: "notice", text: notice, attrs: { role: "status" } }) : null,
      tabList,
      ...panels
    )
  );
  return { element, focus: first };
}

// web/attention.ts
var SOUND_KEY = "mud-play-sound";
function attention() {
  const title = document.title;
  let unread = 0;
  let audio = null;
  const showCount = () => {
    document.title = unread > 0 ? `(${unread}) ${title}` : title;
  };
  const onVisibility = () => {
    if (document.visibilityState === "visible") {
      unread = 0;
      showCount();
    }
  };
  document.addEventListener("visibilitychange", onVisibility);
  const toggle = h("input", { attrs: { type: "checkbox", id: "sound" } });
  toggle.checked = localStorage.getItem(SOUND_KEY) === "on";
  const ready = () => {
    if (toggle.checked) audio ??= new AudioContext();
  };
  toggle.addEventListener("change", () => {
    localStorage.setItem(SOUND_KEY, toggle.checked ? "on" : "off");
    ready();
    if (toggle.checked) beep();
  });
  document.addEventListener("pointerdown", ready, { once: true });
  document.addEventListener("keydown", ready, { once: true });
  const beep = () => {
    if (!audio) return;
    const oscillator = audio.createOscillator();
    const gain = audio.createGain();
    oscillator.frequency.value = 880;
    gain.gain.setValueAtTime(0.12, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(1e-3, audio.currentTime + 0.18);
    oscillator.connect(gain).connect(audio.destination);
    oscillator.start();
    oscillator.stop(audio.currentTime + 0.18);
  };
  return {
    notice: (forMe) => {
      if (document.visibilityState === "hidden") {
        unread++;
        showCount();
      }
      if (forMe && toggle.checked) beep();
    },
    control: h("label", { class: "sound", attrs: { title: "A beep for whispers, tells and mentions of your name" } }, toggle, " Sound"),
    dispose: () => {
      document.removeEventListener("visibilitychange", onVisibility);
      document.removeEventListener("pointerdown", ready);
      document.removeEventListener("keydown", ready);
      void audio?.close();
      audio = null;
      unread = 0;
      showCount();
    }
  };
}

// web/live.ts
var PRESENCE_EVENT = "mud:presence";
var RETRY_MS = [500, 1e3, 2e3, 4e3];
var POLL_MS = 2e3;
var STREAM_FAILURES_BEFORE_POLLING = 3;
var STREAM_RETRY_MS = 3e4;
var TRANSIENT_ENDS = /* @__PURE__ */ new Set(["shutdown", "lagging"]);
function connectLive(sessionId, handlers) {
  let source = null;
  let stopped = false;
  let away = false;
  let attempts = 0;
  let streamFailures = 0;
  let polling = false;
  let timer;
  let pollTimer;
  let lastChatId = 0;
  const shown = /* @__PURE__ */ new Set();
  let held = null;
  const showChat = (message) => {
    if (shown.has(message.id)) return;
    shown.add(message.id);
    lastChatId = Math.max(lastChatId, message.id);
    handlers.chat(message);
  };
  const setAway = () => {
    away = true;
    handlers.state("away");
  };
  const fetchMissed = async () => {
    const result = await call(api.GET("/chat/{session_id}", { params: { path: { session_id: sessionId }, query: { after: lastChatId } } }));
    if (!result.ok) return false;
    result.data.messages.forEach(showChat);
    return true;
  };
  const catchUp = async () => {
    held = [];
    await fetchMissed();
    const live = held;
    held = null;
    live.forEach(showChat);
    if (away) {
      away = false;
      handlers.resumed();
    }
  };
  const on = (stream, name, handle) => {
    stream.addEventListener(name, (event) => {
      if (stream !== source) return;
      const data = JSON.parse(event.data);
      handle(data);
    });
  };
  const openStream = () => {
    const stream = new EventSource(eventsUrl(sessionId));
    source = stream;
    let opened = false;
    stream.addEventListener("open", () => {
      opened = true;
      attempts = 0;
      streamFailures = 0;
      handlers.state("live");
      void catchUp();
    });
    stream.addEventListener("error", () => {
      if (stream !== source) return;
      setAway();
      if (!opened || stream.readyState === EventSource.CLOSED) reconnect();
    });
    on(stream, "chat", (message) => held ? held.push(message) : showChat(message));
    on(stream, "arrive", handlers.arrive);
    on(stream, "leave", handlers.leave);
    on(stream, "item", handlers.item);
    on(stream, "presence", handlers.presence);
    on(stream, "room", handlers.room);
    on(stream, "announcement", handlers.announcement);
    on(stream, "end", ({ reason }) => {
      if (TRANSIENT_ENDS.has(reason)) {
        setAway();
        reconnect();
      } else {
        stop();
        handlers.ended(reason);
      }
    });
  };
  const closeStream = () => {
    source?.close();
    source = null;
  };
  const reconnect = () => {
    closeStream();
    clearTimeout(timer);
    timer = setTimeout(() => void probe(), RETRY_MS[Math.min(attempts, RETRY_MS.length - 1)]);
    attempts++;
  };
  const probe = async () => {
    const status = await call(api.GET("/status/{session_id}", { params: { path: { session_id: sessionId } } }));
    if (stopped) return;
    if (!status.ok) return status.status === 401 ? void 0 : reconnect();
    if (streamFailures >= STREAM_FAILURES_BEFORE_POLLING) return startPolling();
    streamFailures++;
    openStream();
  };
  const poll = async () => {
    if (await fetchMissed()) {
      handlers.state("polling");
      if (away) {
        away = false;
        handlers.resumed();
      }
    } else if (!stopped) setAway();
  };
  const startPolling = () => {
    closeStream();
    polling = true;
    handlers.state("polling");
    void poll();
    pollTimer = setInterval(() => void poll(), POLL_MS);
    if (typeof EventSource === "function") {
      timer = setTimeout(() => {
        clearInterval(pollTimer);
        polling = false;
        streamFailures = 0;
        openStream();
      }, STREAM_RETRY_MS);
    }
  };
  const stop = () => {
    stopped = true;
    closeStream();
    clearTimeout(timer);
    clearInterval(pollTimer);
  };
  handlers.state("connecting");
  if (typeof EventSource === "function") openStream();
  else startPolling();
  return {
    poke: () => {
      if (polling) void poll();
    },
    stop
  };
}

// src/shared/roles.ts
var ROLES = ["player", "worldbuilder", "admin", "superuser"];
var GRANTS = {
  player: ["play_game", "chat"],
  worldbuilder: ["play_game", "chat", "edit_world", "create_rooms", "create_items"],
  admin: ["play_game", "chat", "edit_world", "create_users", "kick_users", "ban_users", "view_logs", "stop_server", "announce"]
};
function rank(role) {
  return ROLES.indexOf(role);
}
function hasPermission(role, permission) {
  return role === "superuser" || GRANTS[role].includes(permission);
}
function outranks(actor, target) {
  return rank(actor) > rank(target);
}

// web/admin.ts
var PRESENCE_REFRESH_MS = 500;
function onlineState(player, sessions) {
  const mine = sessions.filter((s) => s.username === player.username);
  const worlds = (list) => [...new Set(list.map((s) => s.world_id ?? "?"))].join(", ");
  const playing = mine.filter((s) => s.character_name !== null && s.connected);
  if (playing.length > 0) return { text: `Playing (${worlds(playing)})`, on: true };
  const linkdead = mine.filter((s) => s.character_name !== null && !s.away);
  if (linkdead.length > 0) return { text: `Link-dead (${worlds(linkdead)})`, on: false };
  if (mine.some((s) => s.character_name !== null)) return { text: "Away", on: false };
  if (mine.some((s) => s.connected)) return { text: "Online", on: true };
  return { text: mine.length > 0 ? "Logged in, idle" : "Offline", on: false };
}
function localTime(utc) {
  if (utc === null) return h("span", { class: "muted", text: "—" });
  const date = utcDate(utc);
  if (Number.isNaN(date.getTime())) return h("span", { text: utc });
  return h("time", { text: date.toLocaleString([], { dateStyle: "short", timeStyle: "short" }), attrs: { datetime: date.toISOString(), title: `${utc} UTC` } });
}
function table(headings, rows, empty) {
  const head = h("tr", {}, ...headings.map((text) => text === "" ? h("th", { attrs: { scope: "col" } }, h("span", { class: "visually-hidden", text: "Actions" })) : h("th", { text, attrs: { scope: "col" } })));
  const body = h("tbody", {}, ...rows);
  if (rows.length === 0) body.append(h("tr", {}, h("td", { class: "muted", text: empty, attrs: { colspan: String(headings.length) } })));
  return h("div", { class: "table-wrap" }, h("table", {}, h("thead", {}, head), body));
}
var MUTE_DURATIONS = [
  ["15 minutes", 15],
  ["1 hour", 60],
  ["1 day", 1440],
  ["1 week", 10080]
];
function reasonInput() {
  return h("input", { attrs: { type: "text", maxlength: "200", autocomplete: "off", placeholder: "Optional, kept in the audit log" } });
}
function connection(row) {
  if (row.open_streams > 0) return `Yes (${row.open_streams} stream${row.open_streams === 1 ? "" : "s"})`;
  if (row.connected) return "Yes (requests)";
  return row.away ? "No (away)" : row.character_name ? "No (link-dead)" : "No";
}
function openAdmin(session2, opener) {
  const status = h("p", { class: "admin-status", attrs: { role: "status" } });
  const users = h("section", { attrs: { "aria-labelledby": "admin-users" } });
  const sessions = h("section", { attrs: { "aria-labelledby": "admin-sessions" } });
  const reports = h("section", { attrs: { "aria-labelledby": "admin-reports" } });
  const audit = h("section", { attrs: { "aria-labelledby": "admin-audit" } });
  const closeButton = h("button", { class: "ghost", text: "Close", attrs: { type: "button" } });
  const refreshButton = h("button", { class: "ghost", text: "Refresh", attrs: { type: "button" } });
  const report = (outcome) => {
    const ok = outcome.ok && outcome.data.success;
    status.textContent = outcome.ok ? outcome.data.message : outcome.detail;
    status.dataset.ok = String(ok);
    void refresh();
  };
  const usernameInput = h("input", { attrs: { type: "text", list: "admin-usernames", autocomplete: "off", spellcheck: "false" } });
  const usernames = h("datalist", { attrs: { id: "admin-usernames" } });
  const worldSelect = h("select", {}, ...session2.worlds.map((world) => h("option", { text: world.name, attrs: { value: world.id } })));
  const grantForm = h(
    "form",
    { class: "grant" },
    field("User", usernameInput),
    usernames,
    field("World", worldSelect),
    h("button", { class: "primary", text: "Grant access", attrs: { type: "submit" } })
  );
  grantForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { target_username: usernameInput.value.trim(), world_id: worldSelect.value, can_access: true };
    report(await call(api.POST("/admin/user/world-access", { body })));
  });
  const manage = async (body) => report(await call(api.POST("/admin/user/manage", { body })));
  const button = (text, label, onClick, danger = false) => h("button", { class: `small${danger ? " danger" : ""}`, text, attrs: { type: "button", "aria-label": label }, onClick });
  const roleCell = (player) => {
    if (!hasPermission(session2.role, "manage_users") || !outranks(session2.role, player.role)) return h("td", { text: player.role });
    const assignable = ROLES.filter((role) => session2.role === "superuser" || outranks(session2.role, role));
    const select = h("select", { attrs: { "aria-label": `Role of ${player.username}` } }, ...assignable.map((role) => h("option", { text: role, attrs: { value: role, selected: role === player.role } })));
    select.addEventListener("change", async () => {
      const role = select.value;
      const sure = await ask({ question: `Make ${player.username} ${role === "admin" ? "an" : "a"} ${role}?`, detail: `${player.username} is ${player.role === "admin" ? "an" : "a"} ${player.role} now; the change counts from their next request.`, confirm: "Change role" });
      if (sure) await manage({ action: "change_role", target_username: player.username, new_role: role });
      else select.value = player.role;
    });
    return h("td", {}, select);
  };
  const accountText = (player) => {
    if (!player.is_active) return h("td", { text: "Banned" });
    const muted = player.muted_until === null ? null : h("div", { class: "muted-note", attrs: { title: player.mute_reason ?? "" } }, "Muted until ", localTime(player.muted_until));
    if (!player.is_guest) return h("td", {}, "Permanent", muted);
    return h("td", {}, "Temporary until ", localTime(player.guest_expires_at), muted);
  };
  const userActions = (player) => {
    if (player.username === session2.username || !outranks(session2.role, player.role)) return [];
    const actions = [];
    const name = player.username;
    if (hasPermission(session2.role, "ban_users")) {
      if (player.is_active) {
        actions.push(
          button("Ban", `Ban ${name}`, async () => {
            const reason = reasonInput();
            const sure = await ask({ question: `Ban ${name}?`, detail: `${name} is logged out everywhere at once and cannot log in until unbanned.`, confirm: "Ban", fields: [{ element: reason, label: "Reason" }] });
            if (sure) await manage({ action: "ban", target_username: name, reason: reason.value });
          }, true)
        );
        if (player.muted_until === null) {
          actions.push(
            button("Mute", `Mute ${name}`, async () => {
              const duration = h("select", {}, ...MUTE_DURATIONS.map(([text, minutes]) => h("option", { text, attrs: { value: String(minutes) } })));
              const reason = reasonInput();
              const sure = await ask({
                question: `Mute ${name}?`,
                detail: `${name} can still play but not say, yell, whisper, emote, tell or ooc until the mute ends; they are told until when, and why.`,
                confirm: "Mute",
                fields: [
                  { element: duration, label: "For" },
                  { element: reason, label: "Reason", hint: "Shown to them" }
                ]
              });
              if (sure) await manage({ action: "mute", target_username: name, minutes: Number(duration.value), reason: reason.value });
            })
          );
        } else actions.push(button("Unmute", `Unmute ${name}`, () => void manage({ action: "unmute", target_username: name })));
      } else actions.push(button("Unban", `Unban ${name}`, () => void manage({ action: "unban", target_username: name })));
    }
    if (player.is_guest && hasPermission(session2.role, "create_users")) {
      actions.push(button("Make permanent", `Make permanent ${name}`, () => void manage({ action: "make_permanent", target_username: name })));
    }
    if (hasPermission(session2.role, "manage_users")) {
      actions.push(
        button("Reset password", `Reset password of ${name}`, async () => {
          const password = h("input", { attrs: { type: "password", autocomplete: "new-password" } });
          const sure = await ask({
            question: `New password for ${name}`,
            detail: `${name} is logged out everywhere and logs in with this password from now on.`,
            confirm: "Set password",
            input: { element: password, label: "New password" }
          });
          if (sure) await manage({ action: "change_password", target_username: name, new_password: password.value });
        })
      );
    }
    return actions;
  };
  let reportsRead = 0;
  let auditRead = 0;
  const showReports = async () => {
    if (!hasPermission(session2.role, "ban_users")) return;
    const reading = ++reportsRead;
    const heading = (count) => h("h3", { text: count === null ? "Reports" : `Open reports (${count})`, attrs: { id: "admin-reports" } });
    const listed = await call(api.GET("/admin/reports", { params: { query: { limit: 50 } } }));
    if (reading !== reportsRead) return;
    if (!listed.ok) {
      reports.replaceChildren(heading(null), h("p", { class: "form-error", text: listed.detail }));
      return;
    }
    const rows = listed.data.reports.map((r) => {
      const chat = r.context.length === 0 ? null : h("details", {}, h("summary", { text: `Chat before (${r.context.length})` }), h("ol", { class: "report-chat" }, ...r.context.map((m) => h("li", { text: chatText(chatLine(m, "")) }))));
      const action = r.status === "open" ? button("Resolve", `Resolve report ${r.id}`, async () => {
        const note = h("input", { attrs: { type: "text", maxlength: "1000", autocomplete: "off" } });
        if (await ask({ question: `Resolve report ${r.id}?`, detail: `${r.reporter_character} about ${r.reported_character}: ${r.text}`, confirm: "Resolve", input: { element: note, label: "What was done" } })) {
          report(await call(api.POST("/admin/reports/{report_id}/resolve", { params: { path: { report_id: r.id } }, body: { note: note.value } })));
        }
      }) : h("span", { class: "muted", text: `Resolved by ${r.resolved_by ?? "?"}: ${r.resolution_note ?? ""}` });
      return h(
        "tr",
        { class: r.status === "open" ? "" : "resolved" },
        h("td", {}, localTime(r.created_at)),
        h("td", { text: `${r.reporter_character} (${r.reporter_username})` }),
        h("td", { text: r.reported_username === null ? r.reported_character : `${r.reported_character} (${r.reported_username})` }),
        h("td", { text: `${r.world_id}${r.room_id === null ? "" : ` · ${r.room_id}`}` }),
        h("td", {}, h("div", { text: r.text }), chat),
        h("td", {}, action)
      );
    });
    reports.replaceChildren(heading(listed.data.reports.filter((r) => r.status === "open").length), table(["When", "From", "About", "Where", "What", ""], rows, "No reports."));
  };
  const showAudit = async (before) => {
    if (!hasPermission(session2.role, "view_logs")) return;
    const reading = ++auditRead;
    const heading = h("h3", { text: "Audit log", attrs: { id: "admin-audit" } });
    const page = await call(api.GET("/admin/audit", { params: { query: before === void 0 ? { limit: 50 } : { limit: 50, before } } }));
    if (reading !== auditRead) return;
    if (!page.ok) {
      audit.replaceChildren(heading, h("p", { class: "form-error", text: page.detail }));
      return;
    }
    const rows = page.data.entries.map(
      (e) => h(
        "tr",
        {},
        h("td", {}, localTime(e.created_at)),
        h("td", { text: `${e.actor_username} (${e.actor_role})` }),
        h("td", { text: e.action.replace("_", " ") }),
        h("td", { text: e.target_username ?? "—" }),
        h("td", { text: e.reason ?? "—" }),
        h("td", { text: e.detail ?? "" }),
        h("td", { text: e.door })
      )
    );
    const older = page.data.next_before === null ? null : button("Older entries", "Older entries of the audit log", () => void showAudit(page.data.next_before));
    const shown = before === void 0 ? null : audit.querySelector("tbody");
    if (shown) {
      shown.append(...rows);
      audit.querySelector(".older")?.replaceWith(older ? h("div", { class: "older" }, older) : "");
      return;
    }
    audit.replaceChildren(heading, table(["When", "Staff", "Action", "Whom", "Reason", "Detail", "Door"], rows, "Nothing recorded yet."), ...older ? [h("div", { class: "older" }, older)] : []);
  };
  const refresh = async () => {
    void showReports();
    void showAudit();
    const [players, live] = await Promise.all([call(api.GET("/admin/database/players")), call(api.GET("/admin/database/sessions"))]);
    const onlineCell = (player) => {
      const state = onlineState(player, live.ok ? live.data.sessions : []);
      return h("td", {}, h("span", { class: `dot ${state.on ? "on" : "off"}`, attrs: { "aria-hidden": "true" } }), state.text);
    };
    if (!players.ok) users.replaceChildren(h("h3", { text: "Users", attrs: { id: "admin-users" } }), h("p", { class: "form-error", text: players.detail }));
    else {
      usernames.replaceChildren(...players.data.players.map((player) => h("option", { attrs: { value: player.username } })));
      const rows = players.data.players.map(
        (player) => h(
          "tr",
          { class: player.is_active ? "" : "banned" },
          h("th", { text: player.username, attrs: { scope: "row" } }),
          roleCell(player),
          onlineCell(player),
          accountText(player),
          h("td", { text: String(player.character_count) }),
          h("td", {}, localTime(player.last_login)),
          h("td", {}, h("div", { class: "row-actions" }, ...userActions(player)))
        )
      );
      users.replaceChildren(h("h3", { text: `Users (${rows.length})`, attrs: { id: "admin-users" } }), table(["User", "Role", "Online", "Account", "Characters", "Last login", ""], rows, "No users."));
    }
    if (!live.ok) sessions.replaceChildren(h("h3", { text: "Sessions", attrs: { id: "admin-sessions" } }), h("p", { class: "form-error", text: live.detail }));
    else {
      const rows = live.data.sessions.map((row) => {
        const kick = button("Kick", `Kick session ${row.id} of ${row.username}`, async () => {
          const who = row.character_name ? `${row.character_name} (${row.username})` : row.username;
          const reason = reasonInput();
          if (!await ask({ question: `Kick ${who}?`, detail: `Session ${row.id} ends at once; ${row.username} can log in again.`, confirm: "Kick", fields: [{ element: reason, label: "Reason" }] })) return;
          report(await call(api.POST("/admin/session/kick", { body: { target_session_id: String(row.id), reason: reason.value } })));
        }, true);
        return h(
          "tr",
          {},
          h("th", { text: String(row.id), attrs: { scope: "row" } }),
          h("td", { text: row.username }),
          h("td", { text: row.character_name ?? "—" }),
          h("td", { text: row.world_id ?? "—" }),
          h("td", { text: row.client_type }),
          h("td", { text: connection(row) }),
          h("td", {}, localTime(row.last_activity)),
          // One's own session is left by logging out, not kicked.
          h("td", {}, row.current ? h("span", { class: "muted", text: "This session" }) : kick)
        );
      });
      sessions.replaceChildren(
        h("h3", { text: `Active sessions (${rows.length})`, attrs: { id: "admin-sessions" } }),
        table(["#", "User", "Character", "World", "Client", "Connected", "Last activity", ""], rows, "No sessions.")
      );
    }
  };
  const dialog = h(
    "dialog",
    { class: "admin", attrs: { "aria-labelledby": "admin-title" } },
    h("header", {}, h("h2", { text: "Administration", attrs: { id: "admin-title" } }), refreshButton, closeButton),
    status,
    h("section", { attrs: { "aria-labelledby": "admin-grant" } }, h("h3", { text: "Grant world access", attrs: { id: "admin-grant" } }), grantForm),
    reports,
    users,
    sessions,
    audit
  );
  closeButton.addEventListener("click", () => dialog.close());
  refreshButton.addEventListener("click", () => void refresh());
  let presenceTimer;
  const presenceChanged = () => {
    clearTimeout(presenceTimer);
    presenceTimer = setTimeout(() => void refresh(), PRESENCE_REFRESH_MS);
  };
  document.addEventListener(PRESENCE_EVENT, presenceChanged);
  dialog.addEventListener("close", () => {
    clearTimeout(presenceTimer);
    document.removeEventListener(PRESENCE_EVENT, presenceChanged);
    dialog.remove();
    opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  void refresh();
}

// web/build-scripts.ts
var SCRIPT_HINT = `JavaScript: onLoad(), onEnter(actor), onLeave(actor), onSay(actor, text), onCommand(actor, verb, args), an item's onGet(actor) and onDrop(actor), and a timer's function by its name, as every(seconds, "name") and after(seconds, "name") name it (README, "Scripting NPCs, rooms and items"). Empty: no script.`;
var SUSPENDED_TEXT = "Suspended after faults in a row: save the script again to run it.";
var SCRIPT_MAX_LENGTH = 65536;
var ERRORS_SHOWN = 20;
var NPC_PAGE = 200;
function kept(input2) {
  let shown = "";
  return {
    show: (value) => {
      if (input2.value === shown) input2.value = value;
      shown = value;
    },
    changed: () => input2.value !== shown
  };
}
function statusLine() {
  const element = h("p", { class: "admin-status", attrs: { role: "status" } });
  return {
    element,
    report: (outcome, done, saving = false) => {
      const stale = !outcome.ok && outcome.status === 409 && saving;
      element.textContent = outcome.ok ? done : stale ? `${outcome.detail}. What you typed is kept: save again to replace that version with it.` : outcome.detail;
      element.dataset.ok = String(outcome.ok);
      return outcome.ok;
    }
  };
}
function suspended(owner) {
  return owner.script_suspended === true;
}
function suspendedNote(area) {
  const element = h("p", { class: "suspended", text: SUSPENDED_TEXT, attrs: { id: `${area.id}-suspended`, hidden: true } });
  return {
    element,
    show: (on) => {
      element.hidden = !on;
      if (on) area.setAttribute("aria-describedby", element.id);
      else area.removeAttribute("aria-describedby");
    }
  };
}
function scriptArea() {
  return h("textarea", { class: "script", attrs: { rows: "10", maxlength: String(SCRIPT_MAX_LENGTH), wrap: "off", spellcheck: "false", autocapitalize: "none", autocomplete: "off" } });
}
function scriptValue(area) {
  return area.value.trim() === "" ? null : area.value;
}
function showLine(area, outcome) {
  const line = !outcome.ok && outcome.status === 400 ? /\(line (\d+)\)/.exec(outcome.detail) : null;
  if (!line) return;
  const lines = area.value.split("\n");
  const index = Math.min(Number(line[1]), lines.length) - 1;
  const start = lines.slice(0, index).reduce((sum, text) => sum + text.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[index]?.length ?? 0));
  const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
  area.scrollTop = Math.max(0, (index - 3) * lineHeight);
}
function roomScript(save) {
  const area = scriptArea();
  const text = kept(area);
  const status = statusLine();
  const scriptField = field("Room script", area, SCRIPT_HINT);
  const note = suspendedNote(area);
  const form2 = h("form", { class: "script-form" }, note.element, scriptField, h("button", { class: "primary", text: "Save script", attrs: { type: "submit" } }), status.element);
  form2.addEventListener("submit", async (event) => {
    event.preventDefault();
    const outcome = await save(scriptValue(area));
    status.report(outcome, scriptValue(area) === null ? "The room has no script now." : "Room script saved.", true);
    showLine(area, outcome);
  });
  return {
    element: form2,
    show: (room) => {
      text.show(room.script ?? "");
      note.show(suspended(room));
    }
  };
}
function npcsHere(worldId) {
  let roomId = null;
  const editors = /* @__PURE__ */ new Map();
  const list = h("ul", { class: "things npc-editors" });
  const status = statusLine();
  const npcPath = (npcId) => ({ world_id: worldId, npc_id: npcId });
  const editor = (first) => {
    let npc = first;
    const summary = h("summary");
    const details = h("details", {}, summary);
    const name = h("input", { attrs: { type: "text", maxlength: "100", autocomplete: "off" } });
    const description = h("textarea", { attrs: { rows: "3", maxlength: "1000" } });
    const area = scriptArea();
    const fields = { name: kept(name), description: kept(description), script: kept(area) };
    const own = statusLine();
    const save = h("button", { class: "primary", text: "Save NPC", attrs: { type: "submit" } });
    const remove = h("button", { class: "danger", text: "Delete", attrs: { type: "button" } });
    const revert = h("button", { text: "Revert to the package", attrs: { type: "button" } });
    const scriptField = field("Script", area, SCRIPT_HINT);
    const note = suspendedNote(area);
    const form2 = h("form", { class: "npc-form" }, field("Name", name), field("Description", description), note.element, scriptField, h("div", { class: "npc-buttons" }, save, revert, remove), own.element);
    details.append(form2);
    form2.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { version: npc.version };
      if (fields.name.changed()) body.name = name.value;
      if (fields.description.changed()) body.description = description.value;
      if (fields.script.changed() || suspended(npc)) body.script = scriptValue(area);
      if (Object.keys(body).length === 1) return void own.report({ ok: true, data: null }, "Nothing changed.");
      const outcome = await call(api.PATCH("/api/worlds/{world_id}/npcs/{npc_id}", { params: { path: npcPath(npc.id) }, body }));
      if (outcome.ok) show2(outcome.data);
      own.report(outcome, `${outcome.ok ? outcome.data.name : npc.name} saved.`, true);
      showLine(area, outcome);
      if (!outcome.ok && outcome.status !== 400) await reload();
    });
    remove.addEventListener("click", async () => {
      const sure = await ask({ question: `Delete ${npc.name}?`, detail: "It leaves the room at once; its script, timers and state go with it.", confirm: "Delete" });
      if (!sure) return;
      const outcome = await call(api.DELETE("/api/worlds/{world_id}/npcs/{npc_id}", { params: { path: npcPath(npc.id), query: { version: npc.version } } }));
      status.report(outcome, `${npc.name} is gone.`);
      await reload();
    });
    revert.addEventListener("click", async () => {
      const outcome = await call(api.POST("/api/worlds/{world_id}/npcs/{npc_id}/revert", { params: { path: npcPath(npc.id) }, body: { version: npc.version } }));
      if (outcome.ok) {
        name.value = outcome.data.name;
        description.value = outcome.data.description;
        area.value = outcome.data.script ?? "";
        show2(outcome.data);
      }
      own.report(outcome, `${npc.name} is as its package has it again.`);
      await reload();
    });
    const show2 = (next) => {
      if (next.version < npc.version) return;
      npc = next;
      const from = npc.script_file ? `script ${npc.script_file}` : npc.script ? "a builder's script" : "no script";
      const home = npc.room_id === npc.standing_in ? "" : ` · lives in ${npc.room_id}`;
      const stopped = suspended(npc);
      summary.replaceChildren(h("strong", { text: npc.name }), h("span", { class: "muted", text: ` ${npc.id} · version ${npc.version} · ${from}${home}` }), ...stopped ? [" ", h("span", { class: "badge suspended", text: "Script suspended" })] : []);
      note.show(stopped);
      fields.name.show(npc.name);
      fields.description.show(npc.description);
      fields.script.show(npc.script ?? "");
      revert.hidden = !(npc.origin === "package" && npc.changed);
      remove.setAttribute("aria-label", `Delete ${npc.name}`);
    };
    show2(first);
    return {
      element: h("li", {}, details),
      npc: () => npc,
      show: show2,
      open: () => {
        details.open = true;
        area.focus();
      }
    };
  };
  const standingIn = async (room) => {
    const here = [];
    for (let after; ; ) {
      const page = await call(api.GET("/api/worlds/{world_id}/npcs", { params: { path: { world_id: worldId }, query: { standing_in: room, limit: NPC_PAGE, ...after === void 0 ? {} : { after } } } }));
      if (!page.ok) return page;
      here.push(...page.data.npcs);
      if (page.data.npcs.length < NPC_PAGE) return { ok: true, data: here };
      after = page.data.npcs.at(-1).id;
    }
  };
  const reload = async () => {
    if (roomId === null) return;
    const listed = await standingIn(roomId);
    if (!listed.ok) return void status.report(listed, "");
    const here = listed.data;
    for (const id of [...editors.keys()]) if (!here.some((npc) => npc.id === id)) editors.delete(id);
    for (const summary of here) {
      const known = editors.get(summary.id);
      if (known && known.npc().version === summary.version) {
        known.show({ ...known.npc(), ...summary });
        continue;
      }
      const read = await call(api.GET("/api/worlds/{world_id}/npcs/{npc_id}", { params: { path: npcPath(summary.id) } }));
      if (!read.ok) return void status.report(read, "");
      if (known) known.show(read.data);
      else editors.set(summary.id, editor(read.data));
    }
    const shown = here.map((npc) => editors.get(npc.id).element);
    if (shown.length !== list.children.length || shown.some((element, i) => list.children[i] !== element)) list.replaceChildren(...shown);
    if (here.length === 0) list.replaceChildren(h("li", { class: "muted", text: "No NPC stands here." }));
  };
  const newName = h("input", { attrs: { type: "text", maxlength: "100", autocomplete: "off" } });
  const newDescription = h("input", { attrs: { type: "text", maxlength: "1000", autocomplete: "off" } });
  const create = h("form", { class: "grant" }, field("NPC name", newName), field("NPC description", newDescription), h("button", { class: "primary", text: "Create NPC", attrs: { type: "submit" } }));
  create.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (roomId === null) return;
    const body = { name: newName.value, description: newDescription.value || `${newName.value.trim()}, nothing more.`, room_id: roomId };
    const created = await call(api.POST("/api/worlds/{world_id}/npcs", { params: { path: { world_id: worldId } }, body }));
    if (!status.report(created, created.ok ? `${created.data.name} stands here now: write its script below.` : "") || !created.ok) return;
    newName.value = "";
    newDescription.value = "";
    await reload();
    editors.get(created.data.id)?.open();
  });
  return {
    element: h("div", {}, list, create, status.element),
    load: (id) => {
      roomId = id;
      return reload();
    }
  };
}
function scriptErrors(worldId) {
  const body = h("tbody");
  const status = statusLine();
  const refresh = h("button", { class: "small", text: "Refresh", attrs: { type: "button", "aria-label": "Refresh the script errors" } });
  const table2 = h(
    "table",
    { class: "script-errors" },
    h("caption", { class: "visually-hidden", text: "Script errors, newest first" }),
    h("thead", {}, h("tr", {}, ...["When", "Script", "Hook", "Line", "What"].map((title) => h("th", { text: title, attrs: { scope: "col" } })))),
    body
  );
  const load = async () => {
    const listed = await call(api.GET("/api/worlds/{world_id}/script-errors", { params: { path: { world_id: worldId }, query: { limit: ERRORS_SHOWN } } }));
    if (!listed.ok) return void status.report(listed, "");
    body.replaceChildren(
      ...listed.data.errors.map((error) => {
        const when = utcDate(error.created_at);
        const valid = !Number.isNaN(when.getTime());
        return h(
          "tr",
          {},
          h("td", {}, h("time", { text: valid ? when.toLocaleString() : error.created_at, attrs: { datetime: valid ? when.toISOString() : "" } })),
          h("td", { text: error.owner }),
          h("td", { text: error.hook }),
          h("td", { text: error.line === null ? "" : String(error.line) }),
          h("td", { class: "message" }, h("span", { class: "badge", text: error.kind }), " ", error.message)
        );
      })
    );
    if (listed.data.errors.length === 0) body.append(h("tr", {}, h("td", { class: "muted", text: "No script errors.", attrs: { colspan: "5" } })));
  };
  refresh.addEventListener("click", () => void load());
  return { element: h("div", {}, h("div", { class: "errors-head" }, h("p", { class: "muted", text: `The ${ERRORS_SHOWN} newest, newest first.` }), refresh), h("div", { class: "table-wrap" }, table2), status.element), load };
}

// web/build.ts
var BUILDER_ROLES = /* @__PURE__ */ new Set(["worldbuilder", "admin", "superuser"]);
var DIRECTIONS = ["north", "south", "east", "west", "up", "down"];
var OPPOSITE2 = { north: "south", south: "north", east: "west", west: "east", up: "down", down: "up" };
var NEW_ROOM_TEXT = "Nothing has been described here yet.";
function openBuild(session2, opener) {
  const worldId = session2.character.worldId;
  let room = null;
  const status = h("p", { class: "admin-status", attrs: { role: "status" } });
  const closeButton = h("button", { class: "ghost", text: "Close", attrs: { type: "button" } });
  const title = h("p", { class: "muted build-room-id" });
  const nameInput = h("input", { attrs: { type: "text", maxlength: "100", autocomplete: "off" } });
  const descriptionInput = h("textarea", { attrs: { rows: "4", maxlength: "1000" } });
  const roomFormId = "build-room-form";
  const roomForm = h("form", { class: "build-room", attrs: { id: roomFormId } }, field("Room name", nameInput), field("Room description", descriptionInput), h("button", { class: "primary", text: "Save room", attrs: { type: "submit" } }));
  const exitList = h("ul", { class: "things" });
  const digDirection = h("select", {}, ...DIRECTIONS.map((d) => h("option", { text: d, attrs: { value: d } })));
  const digName = h("input", { attrs: { type: "text", maxlength: "100", autocomplete: "off" } });
  const digForm = h("form", { class: "grant" }, field("Direction", digDirection), field("New room name", digName), h("button", { class: "primary", text: "Dig", attrs: { type: "submit" } }));
  const itemList = h("ul", { class: "things" });
  const itemName = h("input", { attrs: { type: "text", maxlength: "100", autocomplete: "off" } });
  const itemDescription = h("input", { attrs: { type: "text", maxlength: "1000", autocomplete: "off" } });
  const itemForm = h("form", { class: "grant" }, field("Item name", itemName), field("Item description", itemDescription), h("button", { class: "primary", text: "Add item", attrs: { type: "submit" } }));
  const linkDirection = h("select", {}, ...DIRECTIONS.map((d) => h("option", { text: d, attrs: { value: d } })));
  const linkTarget = h("select", {});
  const linkBoth = h("input", { attrs: { type: "checkbox", checked: true } });
  const linkForm = h(
    "form",
    { class: "grant link-exit" },
    field("Way out", linkDirection),
    field("To the room", linkTarget),
    h("label", { class: "check" }, linkBoth, " Both ways"),
    h("button", { class: "primary", text: "Add exit", attrs: { type: "submit" } })
  );
  const conflict = h("div", { class: "conflict", attrs: { role: "alert", hidden: true } });
  let base = null;
  const historyList = h("ol", { class: "history" });
  const historyButton = h("button", { class: "ghost", text: "Show changes", attrs: { type: "button" } });
  const revertButton = h("button", { class: "small danger", text: "Revert to the package's room", attrs: { type: "button" } });
  const npcs = npcsHere(worldId);
  const errors = scriptErrors(worldId);
  const script = roomScript(async (text) => {
    if (!room) return { ok: false, status: 409, detail: "You are not in a room." };
    const outcome = await call(api.PATCH("/api/worlds/{world_id}/rooms/{room_id}", { params: { path: roomPath(room.id) }, body: { version: room.version, script: text } }));
    if (outcome.ok) {
      room = { ...outcome.data, items: room.items };
      render();
    } else await load();
    return outcome;
  });
  const report = (outcome, done) => {
    status.textContent = outcome.ok ? done : outcome.detail;
    status.dataset.ok = String(outcome.ok);
    return outcome.ok;
  };
  const roomPath = (roomId) => ({ world_id: worldId, room_id: roomId });
  const render = (keepEdit = false) => {
    if (!room) return;
    title.textContent = `${room.id} · zone ${room.zone} · version ${room.version}`;
    if (!keepEdit) {
      nameInput.value = room.name;
      descriptionInput.value = room.description;
      base = { name: room.name, description: room.description };
      conflict.hidden = true;
    }
    revertButton.hidden = room.origin !== "package" || !room.changed;
    script.show(room);
    const exits = Object.entries(room.exits);
    exitList.replaceChildren(
      ...exits.map(([direction, to]) => {
        const remove = h("button", { class: "small danger", text: "Remove", attrs: { type: "button", "aria-label": `Remove the exit ${direction}` } });
        remove.addEventListener("click", async () => {
          const back = OPPOSITE2[direction];
          const sure = await ask({
            question: `Remove the exit ${direction}?`,
            detail: `The way ${direction} to ${to} goes, and so does the way back (${back} from ${to}) if it leads here.`,
            confirm: "Remove exit"
          });
          if (!sure) return;
          const outcome = await call(
            api.DELETE("/api/worlds/{world_id}/rooms/{room_id}/exits/{direction}", {
              params: { path: { ...roomPath(room.id), direction }, query: { version: room.version, two_way: true } }
            })
          );
          report(outcome, `The exit ${direction} is gone.${unreachableNote(outcome)}`);
          await load();
        });
        return h("li", {}, h("span", { text: `${direction} → ${to}` }), remove);
      })
    );
    if (exits.length === 0) exitList.append(h("li", { class: "muted", text: "No exits." }));
    const items = room.items ?? [];
    itemList.replaceChildren(
      ...items.map((item) => {
        const remove = h("button", { class: "small danger", text: "Remove", attrs: { type: "button", "aria-label": `Remove ${item.name}` } });
        remove.addEventListener("click", async () => {
          const outcome = await call(api.DELETE("/api/worlds/{world_id}/items/{item_id}", { params: { path: { world_id: worldId, item_id: item.id }, query: { version: item.version } } }));
          report(outcome, `${item.name} is gone.`);
          await load();
        });
        const describe = h("button", { class: "small", text: "Describe", attrs: { type: "button", "aria-label": `Describe ${item.name}` } });
        describe.addEventListener("click", async () => {
          const text = h("input", { attrs: { type: "text", maxlength: "1000", autocomplete: "off" } });
          text.value = item.description;
          if (!await ask({ question: `Describe ${item.name}`, detail: "What players read when they examine it.", confirm: "Save description", fields: [{ element: text, label: "Description" }] })) return;
          const outcome = await call(
            api.PATCH("/api/worlds/{world_id}/items/{item_id}", { params: { path: { world_id: worldId, item_id: item.id } }, body: { version: item.version, description: text.value } })
          );
          report(outcome, `${item.name} is described anew.`);
          await load();
        });
        return h("li", {}, h("span", { text: item.name }), h("span", { class: "row-actions" }, describe, remove));
      })
    );
    if (items.length === 0) itemList.append(h("li", { class: "muted", text: "Nothing lies here." }));
    const free = DIRECTIONS.filter((d) => room.exits[d] === void 0);
    digDirection.replaceChildren(...free.map((d) => h("option", { text: d, attrs: { value: d } })));
    linkDirection.replaceChildren(...free.map((d) => h("option", { text: d, attrs: { value: d } })));
  };
  const loadTargets = async () => {
    const listed = await call(api.GET("/api/worlds/{world_id}/rooms", { params: { path: { world_id: worldId } } }));
    if (!listed.ok || !room) return;
    const here = room.id;
    linkTarget.replaceChildren(...listed.data.rooms.filter((r) => r.id !== here).map((r) => h("option", { text: `${r.name} (${r.id})`, attrs: { value: r.id } })));
  };
  const unreachableNote = (outcome) => {
    const lost = outcome.ok ? outcome.data.unreachable ?? [] : [];
    return lost.length === 0 ? "" : ` Warning: no walk from the world's spawn reaches ${lost.join(", ")} any more.`;
  };
  const load = async () => {
    const where = await call(api.GET("/status/{session_id}", { params: { path: { session_id: session2.id } } }));
    if (!where.ok || where.data.current_room === null) return void report(where.ok ? { ok: false, status: 409, detail: "You are not in a room." } : where, "");
    const read = await call(api.GET("/api/worlds/{world_id}/rooms/{room_id}", { params: { path: roomPath(where.data.current_room) } }));
    if (!read.ok) return void report(read, "");
    room = read.data;
    render();
    historyList.replaceChildren();
    historyButton.hidden = false;
    await Promise.all([npcs.load(room.id), errors.load(), loadTargets()]);
  };
  const showHistory = async () => {
    if (!room) return;
    const roomId = room.id;
    const listed = await call(api.GET("/api/worlds/{world_id}/changes", { params: { path: { world_id: worldId }, query: { limit: 200 } } }));
    if (!listed.ok) return void report(listed, "");
    const mine = listed.data.changes.filter((c) => c.target_type === "room" && c.target_id === roomId);
    historyList.replaceChildren(
      ...mine.map((c) => {
        const when = utcDate(c.created_at);
        return h("li", {}, h("time", { text: when.toLocaleString([], { dateStyle: "short", timeStyle: "short" }), attrs: { datetime: when.toISOString() } }), ` ${c.actor} · ${c.action} · ${c.via}`);
      })
    );
    if (mine.length === 0) historyList.append(h("li", { class: "muted", text: "No builder has changed this room." }));
  };
  historyButton.addEventListener("click", () => void showHistory());
  revertButton.addEventListener("click", async () => {
    if (!room) return;
    const sure = await ask({ question: `Revert ${room.name}?`, detail: "Its name, description and exits become the package's again; the change history keeps this one too.", confirm: "Revert" });
    if (!sure) return;
    const outcome = await call(api.POST("/api/worlds/{world_id}/rooms/{room_id}/revert", { params: { path: roomPath(room.id) }, body: { version: room.version } }));
    report(outcome, "The room is as its package has it again.");
    await load();
    await showHistory();
  });
  linkForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!room || !linkTarget.value) return;
    const direction = linkDirection.value;
    const body = { direction, to: linkTarget.value, two_way: linkBoth.checked, version: room.version };
    const exit = await call(api.POST("/api/worlds/{world_id}/rooms/{room_id}/exits", { params: { path: roomPath(room.id) }, body }));
    report(exit, `An exit ${direction} leads to ${linkTarget.selectedOptions[0]?.text ?? linkTarget.value}${linkBoth.checked ? ` (${OPPOSITE2[direction]} leads back)` : ""}.`);
    await load();
  });
  roomForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!room) return;
    const body = { version: room.version, name: nameInput.value, description: descriptionInput.value };
    const outcome = await call(api.PATCH("/api/worlds/{world_id}/rooms/{room_id}", { params: { path: roomPath(room.id) }, body }));
    if (report(outcome, "Room saved.") && outcome.ok) {
      room = { ...outcome.data, items: room.items };
      render();
    } else if (!outcome.ok && outcome.status === 409) await changedMeanwhile();
    else await load();
  });
  const changedMeanwhile = async () => {
    if (!room) return;
    const read = await call(api.GET("/api/worlds/{world_id}/rooms/{room_id}", { params: { path: roomPath(room.id) } }));
    if (!read.ok) return void report(read, "");
    room = read.data;
    render(true);
    const was = base ?? { name: "", description: "" };
    const changes = [
      room.name !== was.name ? `the name is now "${room.name}"` : null,
      room.description !== was.description ? `the description is now "${room.description}"` : null
    ].filter((change) => change !== null);
    const saveOver = h("button", { class: "primary", text: "Save mine over it", attrs: { type: "submit" } });
    const discard = h("button", { class: "ghost", text: "Take theirs", attrs: { type: "button" }, onClick: () => render() });
    conflict.replaceChildren(
      h("p", { text: `Someone changed this room while you edited it (it is at version ${room.version} now)${changes.length > 0 ? `: ${changes.join("; ")}` : ""}. Your edit is still here.` }),
      h("div", { class: "row-actions" }, saveOver, discard)
    );
    saveOver.setAttribute("form", roomFormId);
    conflict.hidden = false;
    saveOver.focus();
  };
  digForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!room) return;
    const direction = digDirection.value;
    const created = await call(api.POST("/api/worlds/{world_id}/rooms", { params: { path: { world_id: worldId } }, body: { name: digName.value, description: NEW_ROOM_TEXT, zone: room.zone } }));
    if (!report(created, "") || !created.ok) return;
    const exit = await call(
      api.POST("/api/worlds/{world_id}/rooms/{room_id}/exits", { params: { path: roomPath(room.id) }, body: { direction, to: created.data.id, two_way: true, version: room.version } })
    );
    if (!exit.ok) {
      await call(api.DELETE("/api/worlds/{world_id}/rooms/{room_id}", { params: { path: roomPath(created.data.id), query: { version: created.data.version } } }));
    }
    if (report(exit, `You dig ${direction} to ${created.data.name} (${OPPOSITE2[direction]} leads back).`)) digName.value = "";
    await load();
  });
  itemForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!room) return;
    const body = { name: itemName.value, description: itemDescription.value || `${itemName.value.trim()}, nothing more.` };
    const created = await call(api.POST("/api/worlds/{world_id}/rooms/{room_id}/items", { params: { path: roomPath(room.id) }, body }));
    if (report(created, `${itemName.value.trim()} lies here now.`)) {
      itemName.value = "";
      itemDescription.value = "";
    }
    await load();
  });
  const dialog = h(
    "dialog",
    { class: "admin build", attrs: { "aria-labelledby": "build-title" } },
    h("header", {}, h("h2", { text: "Build", attrs: { id: "build-title" } }), closeButton),
    status,
    title,
    h("section", { attrs: { "aria-labelledby": "build-room" } }, h("h3", { text: "This room", attrs: { id: "build-room" } }), conflict, roomForm),
    h("section", { attrs: { "aria-labelledby": "build-exits" } }, h("h3", { text: "Exits", attrs: { id: "build-exits" } }), exitList, digForm, linkForm),
    h("section", { attrs: { "aria-labelledby": "build-items" } }, h("h3", { text: "Items here", attrs: { id: "build-items" } }), itemList, itemForm),
    h(
      "section",
      { attrs: { "aria-labelledby": "build-history" } },
      h("h3", { text: "History", attrs: { id: "build-history" } }),
      h("div", { class: "row-actions" }, historyButton, revertButton),
      historyList
    ),
    h("section", { attrs: { "aria-labelledby": "build-npcs" } }, h("h3", { text: "NPCs here", attrs: { id: "build-npcs" } }), npcs.element),
    h("section", { attrs: { "aria-labelledby": "build-script" } }, h("h3", { text: "Room script", attrs: { id: "build-script" } }), script.element),
    h("section", { attrs: { "aria-labelledby": "build-errors" } }, h("h3", { text: "Script errors", attrs: { id: "build-errors" } }), errors.element)
  );
  closeButton.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  void load();
}

// web/nav.ts
var STAFF_ROLES = /* @__PURE__ */ new Set(["admin", "superuser"]);
async function logout(nav2) {
  nav2.release();
  await call(api.POST("/logout", { body: {} }));
  saveSession(null);
  nav2.auth("You have logged out.");
}
function accountButtons(nav2, session2) {
  const build = session2.character && BUILDER_ROLES.has(session2.role) ? h("button", { class: "ghost", text: "Build", attrs: { type: "button", "aria-haspopup": "dialog" } }) : null;
  build?.addEventListener("click", () => openBuild(session2, build));
  const admin = STAFF_ROLES.has(session2.role) ? h("button", { class: "ghost", text: "Admin", attrs: { type: "button", "aria-haspopup": "dialog" } }) : null;
  admin?.addEventListener("click", () => openAdmin(session2, admin));
  return h("div", { class: "account" }, build, admin, h("button", { class: "ghost", text: "Log out", attrs: { type: "button" }, onClick: () => void logout(nav2) }));
}

// web/game.ts
var STATE_TEXT = { connecting: "Connecting…", live: "Live", polling: "Polling", away: "Reconnecting…" };
var EMOTE_PREFIX = ":";
var AT_BOTTOM_PX = 48;
var PHONE_WIDTH_PX = 760;
var SHORT_SCREEN_PX = 560;
var MAX_LOG_LINES = 400;
var MAX_HISTORY = 100;
var capitalize = (word) => word.charAt(0).toUpperCase() + word.slice(1);
function clock(utc) {
  const date = utc === void 0 ? /* @__PURE__ */ new Date() : utcDate(utc);
  const valid = !Number.isNaN(date.getTime());
  return h("time", { text: valid ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "", attrs: { datetime: valid ? date.toISOString() : "" } });
}
function gameScreen(nav2, session2) {
  const character = session2.character;
  const me = character.name;
  const worldName = session2.worlds.find((world) => world.id === character.worldId)?.name ?? character.worldId;
  let room = null;
  let commands = [];
  let online = [];
  let linkdead = /* @__PURE__ */ new Set();
  let inventory = [];
  const connection2 = h("span", { class: "connection", attrs: { role: "status" } });
  const banner = h("div", { class: "banner", text: "The server is away. Reconnecting…", attrs: { role: "alert", hidden: true } });
  const roomName = h("h2", { attrs: { id: "room-name" } });
  const roomDescription = h("p", { class: "description" });
  const exits = h("div", { class: "exits", attrs: { role: "group", "aria-label": "Exits" } });
  const items = h("ul", { class: "things" });
  const people = h("ul", { class: "things" });
  const npcList = h("ul", { class: "things npcs" });
  const npcBlock = h("div", { attrs: { hidden: true } }, h("h3", { text: "Also here" }), npcList);
  const lines = h("ol", { class: "lines" });
  const log = h("div", { class: "log", attrs: { role: "log", "aria-live": "polite", "aria-label": "What happens", tabindex: "0" } }, lines);
  const command = h("input", {
    attrs: {
      id: "command",
      type: "text",
      maxlength: String(COMMAND_MAX_LENGTH),
      autocomplete: "off",
      autocapitalize: "none",
      spellcheck: "false",
      enterkeyhint: "send",
      placeholder: "look, north, say hello…",
      "aria-describedby": "command-hint"
    }
  });
  const hint = h("div", { class: "hint", attrs: { id: "command-hint", "aria-live": "polite" } });
  const onlineTitle = h("h3", { text: "Online" });
  const onlineList = h("ul", { class: "names" });
  const inventoryList = h("ul", { class: "names" });
  const quick = (label, text) => h("button", { text: label, attrs: { type: "button" }, onClick: () => void send(text) });
  const commandForm = h(
    "form",
    { class: "command", attrs: { autocomplete: "off" } },
    h("label", { class: "visually-hidden", text: "Command", attrs: { for: "command" } }),
    h("span", { class: "prompt", text: "›", attrs: { "aria-hidden": "true" } }),
    command,
    h("button", { class: "primary", text: "Send", attrs: { type: "submit" } })
  );
  const switchCharacter = h("button", { class: "ghost", text: "Characters", attrs: { type: "button" } });
  switchCharacter.addEventListener("click", () => void call(api.POST("/characters/deselect", { body: {} })).then(() => nav2.lobby()));
  const notices = attention();
  const element = h(
    "div",
    { class: "screen game-screen" },
    h(
      "header",
      { class: "topbar" },
      h("h1", { class: "visually-hidden", text: `${me} in ${worldName}` }),
      h("span", { class: "brand small" }, h("span", { class: "brand-mark", text: "◆", attrs: { "aria-hidden": "true" } }), ` ${worldName}`),
      h("span", { class: "who-am-i" }, h("strong", { text: me }), h("span", { class: "muted", text: ` · ${session2.username}` })),
      connection2,
      h("div", { class: "account" }, switchCharacter, accountButtons(nav2, session2))
    ),
    banner,
    h(
      "main",
      { class: "game" },
      // Around the character: the room, who is online, what it carries (on a phone one scrolling
      // area above the log; elsewhere its cards are columns of the grid).
      h(
        "div",
        { class: "surroundings" },
        h(
          "section",
          { class: "card room", attrs: { "aria-labelledby": "room-name" } },
          roomName,
          roomDescription,
          h("h3", { text: "Exits" }),
          exits,
          h("div", { class: "room-lists" }, h("div", {}, h("h3", { text: "Items here" }), items), h("div", {}, h("h3", { text: "Players here" }), people), npcBlock)
        ),
        h("aside", { class: "side" }, h("section", { class: "card" }, onlineTitle, onlineList), h("section", { class: "card" }, h("h3", { text: "Inventory" }), inventoryList))
      ),
      h(
        "section",
        { class: "play", attrs: { "aria-label": "Play" } },
        log,
        commandForm,
        h(
          "div",
          { class: "play-footer" },
          h("div", { class: "quick", attrs: { role: "group", "aria-label": "Quick commands" } }, quick("Look", "look"), quick("Who", "who"), quick("Inventory", "inventory"), quick("Help", "help")),
          notices.control,
          hint
        )
      )
    )
  );
  const renderRoom = () => {
    if (!room) return;
    roomName.textContent = room.name;
    roomDescription.textContent = room.description;
    const hadFocus = exits.contains(document.activeElement) ? document.activeElement.dataset.direction : void 0;
    exits.replaceChildren(
      ...room.exits.map(
        ({ direction, name }) => h(
          "button",
          // The name is the button's text, "North to Ropewalk Bridge", so it says what it shows.
          { class: "exit", attrs: { type: "button", "data-direction": direction }, onClick: () => void send(direction) },
          h("span", { class: "direction", text: capitalize(direction) }),
          h("span", { class: "visually-hidden", text: " to " }),
          h("span", { class: "to", text: name })
        )
      )
    );
    if (room.exits.length === 0) exits.append(h("p", { class: "muted", text: "No way out." }));
    if (hadFocus !== void 0) {
      const buttons = [...exits.querySelectorAll("button.exit")];
      (buttons.find((b) => b.dataset.direction === hadFocus) ?? buttons[0] ?? command).focus();
    }
    items.replaceChildren(
      ...room.items.map(
        ({ name }) => h("li", {}, h("span", { text: name }), h("button", { class: "small", text: "Take", attrs: { type: "button", "aria-label": `Take ${name}` }, onClick: () => void send(`get ${name}`) }))
      )
    );
    if (room.more_items > 0) items.append(h("li", { class: "muted", text: `and ${room.more_items.toLocaleString("en-US")} more` }));
    if (room.items.length === 0) items.append(h("li", { class: "muted", text: "Nothing." }));
    people.replaceChildren(
      ...room.characters.map(
        ({ name, linkdead: linkdead2 }) => h("li", {}, h("span", {}, name, ...linkdead2 ? [h("span", { class: "muted", text: " (link-dead)" })] : []), h("button", { class: "small", text: "Whisper", attrs: { type: "button", "aria-label": `Whisper to ${name}` }, onClick: () => prefill(`whisper ${name} `) }))
      )
    );
    if (room.more_characters > 0) people.append(h("li", { class: "muted", text: `and ${room.more_characters.toLocaleString("en-US")} more` }));
    if (room.characters.length === 0) people.append(h("li", { class: "muted", text: "Nobody else." }));
    npcList.replaceChildren(
      ...room.npcs.map(
        ({ name }) => h("li", {}, h("span", { text: name }), h("button", { class: "small", text: "Examine", attrs: { type: "button", "aria-label": `Examine ${name}` }, onClick: () => void send(`examine ${name}`) }))
      )
    );
    if (room.more_npcs > 0) npcList.append(h("li", { class: "muted", text: `and ${room.more_npcs.toLocaleString("en-US")} more` }));
    npcBlock.hidden = room.npcs.length === 0;
  };
  const renderSide = () => {
    onlineTitle.textContent = `Online (${online.length})`;
    onlineList.replaceChildren(
      ...online.map(
        (name) => name === me ? h("li", { class: "me", text: `${name} (you)` }) : linkdead.has(name) ? h("li", { class: "linkdead" }, name, h("span", { class: "muted", text: " (link-dead)" })) : h("li", { text: name })
      )
    );
    inventoryList.replaceChildren(
      ...inventory.map(
        (item) => h("li", {}, h("span", { text: item }), h("button", { class: "small", text: "Drop", attrs: { type: "button", "aria-label": `Drop ${item}` }, onClick: () => void send(`drop ${item}`) }))
      )
    );
    if (inventory.length === 0) inventoryList.append(h("li", { class: "muted", text: "Empty-handed." }));
  };
  let following = true;
  const toNewest = () => {
    log.scrollTop = log.scrollHeight;
  };
  log.addEventListener("scroll", () => {
    following = log.scrollHeight - log.scrollTop - log.clientHeight < AT_BOTTOM_PX;
  });
  const resizes = new ResizeObserver(() => {
    if (following) toNewest();
  });
  resizes.observe(log);
  const viewport = window.visualViewport;
  const fit = () => {
    const height = viewport?.height ?? window.innerHeight;
    document.documentElement.style.setProperty("--app-height", `${Math.round(height)}px`);
    document.documentElement.classList.toggle("short-screen", height < SHORT_SCREEN_PX && window.innerWidth <= PHONE_WIDTH_PX);
  };
  fit();
  (viewport ?? window).addEventListener("resize", fit);
  const addLine = (line) => {
    lines.append(line);
    while (lines.childElementCount > MAX_LOG_LINES) lines.firstElementChild.remove();
    if (following) toNewest();
  };
  const happened = (kind, text) => addLine(h("li", { class: `line ${kind}` }, clock(), h("span", { class: "text", text })));
  const write = (kind, text) => addLine(h("li", { class: `line ${kind}`, text }));
  const showRoomInLog = (shown) => addLine(h("li", { class: "line room-entry" }, h("strong", { text: shown.name }), h("span", { text: shown.description })));
  const setRoom = (next) => {
    room = next;
    renderRoom();
  };
  const rebuilt = (before, after) => before.id === after.id && (before.name !== after.name || before.description !== after.description || before.exits.map((e) => `${e.direction}>${e.to}:${e.name}`).join() !== after.exits.map((e) => `${e.direction}>${e.to}:${e.name}`).join());
  const refreshStatus = async () => {
    const status = await call(api.GET("/status/{session_id}", { params: { path: { session_id: session2.id } } }));
    if (!status.ok) return;
    online = status.data.active_players;
    linkdead = new Set(status.data.linkdead_players);
    inventory = listEntries(status.data.inventory);
    renderSide();
  };
  const refreshRoom = async (intoLog = false) => {
    const look = await call(api.POST("/command", { body: { command: "look" } }));
    if (look.ok) {
      const shown = look.data.room;
      if (!shown) return;
      setRoom(shown);
      if (intoLog) showRoomInLog(shown);
    } else if (look.status === 409) nav2.lobby();
  };
  const send = async (text) => {
    const line = text.trim().replace(/^\//, "");
    const verb = line.startsWith(EMOTE_PREFIX) ? "emote" : line.split(/\s+/)[0].toLowerCase();
    const known = commands.find((c) => c.name === verb || c.aliases.includes(verb));
    const chat = known?.section === "Communication";
    if (!chat) write("echo", text);
    const result = await call(api.POST("/command", { body: { command: text } }));
    if (chat && !(result.ok && result.data.success)) write("echo", text);
    if (!result.ok) {
      if (result.status === 409) return nav2.lobby();
      return write("error", result.detail);
    }
    const { success, message } = result.data;
    if (success && chat) {
      const note = message.split("\n").slice(1).join("\n");
      if (note) write("reply", note);
      return live.poke();
    }
    const shown = result.data.room;
    if (shown) {
      const lead = message.split("\n")[0];
      if (lead) write(success ? "reply" : "error", lead);
      setRoom(shown);
      showRoomInLog(shown);
    } else write(success ? "reply" : "error", verb === "who" && success ? `${message}
(and you, ${me})` : message);
    if (success && !shown && known?.section === "Actions") await Promise.all([refreshRoom(), refreshStatus()]);
    if (success && verb === "who") await refreshStatus();
  };
  const history = [];
  let historyIndex = 0;
  let cycle = null;
  const prefill = (text) => {
    command.value = text;
    command.focus();
  };
  const complete = () => {
    if (cycle && command.value === cycle.candidates[cycle.index]) {
      cycle.index = (cycle.index + 1) % cycle.candidates.length;
      command.value = cycle.candidates[cycle.index];
      return true;
    }
    const candidates = completions(command.value, {
      commands,
      exits: room?.exits.map((exit) => exit.direction) ?? [],
      items: room?.items.map((item) => item.name) ?? [],
      inventory,
      people: [...room?.characters.map((c) => c.name) ?? [], ...online.filter((name) => name !== me)]
    });
    if (candidates.length === 0) return false;
    const shared = commonPrefix(candidates);
    if (candidates.length > 1) hint.textContent = `Tab: ${candidates.map((c) => c.trim()).join(" · ")}`;
    else hint.textContent = "";
    if (candidates.length === 1 || shared.length <= command.value.length) {
      cycle = { candidates, index: 0 };
      command.value = candidates[0];
    } else command.value = shared;
    return true;
  };
  command.addEventListener("keydown", (event) => {
    if (event.key === "Tab" && !event.shiftKey && !event.altKey && !event.ctrlKey) {
      if (command.value.trim() === "") return;
      event.preventDefault();
      if (!complete()) hint.textContent = "Nothing to complete.";
      return;
    }
    cycle = null;
    if (event.key === "ArrowUp" && historyIndex > 0) {
      event.preventDefault();
      command.value = history[--historyIndex];
    } else if (event.key === "ArrowDown" && historyIndex < history.length) {
      event.preventDefault();
      command.value = ++historyIndex === history.length ? "" : history[historyIndex];
    } else if (event.key === "Escape") {
      command.value = "";
      hint.textContent = "";
    }
  });
  commandForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = command.value.trim();
    if (text === "") return;
    if (history.at(-1) !== text) history.push(text);
    if (history.length > MAX_HISTORY) history.shift();
    historyIndex = history.length;
    command.value = "";
    hint.textContent = "";
    void send(text);
  });
  let state = "connecting";
  const live = connectLive(session2.id, {
    chat: (message) => {
      const line = chatLine(message, me);
      const said = line.action ? [] : [h("span", { class: "speaker", text: `${line.speaker}:` }), " "];
      const badge = line.mark === null ? [] : [h("span", { class: `badge ${message.speaker}`, text: line.mark }), " "];
      const from = message.speaker ? ` from-${message.speaker}` : "";
      addLine(h("li", { class: `line chat ${line.channel}${from}` }, clock(message.created_at), ...badge, ...said, h("span", { class: "text", text: line.text })));
      if (!line.mine) notices.notice(message.recipient === me || mentions(line.text, me));
    },
    arrive: (event) => {
      if (room && event.npc) {
        const id = event.npc_id ?? "";
        if (!room.npcs.some((npc) => npc.id === id)) room.npcs.push({ id, name: event.character });
      } else if (room && event.character !== me && !room.characters.some((c) => c.name === event.character)) room.characters.push({ name: event.character, linkdead: false });
      renderRoom();
      happened(event.npc ? "movement from-npc" : "movement", movementLine("arrive", event.character, event.direction, event.cause));
    },
    leave: (event) => {
      if (room && event.npc) {
        const index = room.npcs.findIndex((npc) => npc.id === event.npc_id);
        if (index >= 0) room.npcs.splice(index, 1);
      } else if (room) room.characters = room.characters.filter((c) => c.name !== event.character);
      renderRoom();
      happened(event.npc ? "movement from-npc" : "movement", movementLine("leave", event.character, event.direction, event.cause));
    },
    item: (event) => {
      if (room && (event.action === "take" || event.action === "vanish")) {
        const index = room.items.findIndex((item) => item.name === event.item);
        if (index >= 0) room.items.splice(index, 1);
      } else room?.items.push({ name: event.item });
      renderRoom();
      happened("movement", itemLine(event));
    },
    presence: (event) => {
      online = event.online ? [.../* @__PURE__ */ new Set([...online, event.character])].sort() : online.filter((name) => name !== event.character);
      if (event.linkdead && event.online) linkdead.add(event.character);
      else linkdead.delete(event.character);
      const here = room?.characters.find((c) => c.name === event.character);
      if (here) {
        here.linkdead = linkdead.has(event.character);
        renderRoom();
      }
      renderSide();
      document.dispatchEvent(new CustomEvent(PRESENCE_EVENT));
    },
    room: (event) => {
      const before = room;
      setRoom(event.room);
      if (before && rebuilt(before, event.room)) {
        write("system", "The room changes around you.");
        showRoomInLog(event.room);
      }
    },
    announcement: (event) => {
      addLine(h("li", { class: "line announcement" }, clock(event.sent_at), h("span", { class: "text", text: announcementLine(event) })));
      notices.notice(true);
    },
    ended: (reason) => nav2.ended(END_TEXT[reason]),
    state: (next) => {
      if (next === "away" && (state === "live" || state === "polling")) write("system", "Disconnected. Reconnecting…");
      state = next;
      connection2.textContent = STATE_TEXT[next];
      connection2.dataset.state = next;
      banner.hidden = next !== "away";
    },
    resumed: () => {
      write("system", "Connected again.");
      void refreshRoom();
      void refreshStatus();
    }
  });
  write("system", `Welcome to ${worldName}, ${me}. Type help for the commands; Tab completes verbs, directions and names, ↑ and ↓ recall what you typed.`);
  if (session2.guestNotice) {
    write("notice", session2.guestNotice);
    saveSession({ ...session2, guestNotice: void 0 });
  }
  let ended = false;
  const end = (detail) => {
    if (ended) return;
    ended = true;
    live.stop();
    notices.dispose();
    const again = h("button", { class: "primary", text: "Log in again", attrs: { type: "button" }, onClick: () => nav2.auth() });
    const heading = h("h2", { text: "Session ended", attrs: { tabindex: "-1" } });
    commandForm.replaceWith(h("section", { class: "card ended-here", attrs: { role: "alert" } }, heading, h("p", { text: detail }), again));
    element.querySelector(".play-footer")?.remove();
    banner.hidden = true;
    connection2.textContent = "Ended";
    connection2.dataset.state = "ended";
    switchCharacter.remove();
    element.querySelector(".account")?.remove();
    again.focus();
  };
  renderSide();
  void refreshRoom(true);
  void call(api.GET("/commands/{session_id}", { params: { path: { session_id: session2.id } } })).then((listed) => {
    if (listed.ok) commands = listed.data.commands;
  });
  void refreshStatus();
  return {
    element,
    focus: command,
    dispose: () => {
      live.stop();
      resizes.disconnect();
      (viewport ?? window).removeEventListener("resize", fit);
      document.documentElement.classList.remove("short-screen");
      notices.dispose();
    },
    end
  };
}

// web/lobby.ts
var WORLDS_REFRESH_MS = 3e4;
var ACCESS_TEXT = {
  ok: "You can enter",
  invite_required: "Invitation required",
  slot_limit_reached: "All character slots used",
  world_inactive: "Closed"
};
function badges(world) {
  return h(
    "span",
    { class: "badges" },
    h("span", { class: `badge ${world.access_mode === "open" ? "open" : "invite"}`, text: world.access_mode === "open" ? "Open world" : "Invite only" }),
    h("span", { class: `badge ${world.can_access ? "ok" : "locked"}`, text: ACCESS_TEXT[world.access_reason] }),
    h("span", { class: "badge", text: `${world.current_character_count}/${world.slot_limit_per_account} characters` })
  );
}
function worldCard(world, onChoose) {
  return h(
    "button",
    { class: "world", attrs: { type: "button", "aria-pressed": "false" }, onClick: onChoose },
    h("span", { class: "world-name", text: world.name }),
    h("span", { class: "world-description", text: world.description }),
    badges(world)
  );
}
function lobbyScreen(nav2, session2) {
  const characters = h("section", { class: "card characters", attrs: { "aria-live": "polite" } });
  const heading = h("h1", { text: "Choose a world", attrs: { tabindex: "-1" } });
  const worldList = h("div", { class: "world-list" });
  let cards = [];
  let chosen;
  const markChosen = () => cards.forEach((card, index) => card.setAttribute("aria-pressed", String(session2.worlds[index].id === chosen)));
  const renderWorlds = () => {
    cards = session2.worlds.map((world) => worldCard(world, () => choose(world)));
    markChosen();
    worldList.replaceChildren(...cards);
  };
  const choose = (world) => {
    chosen = world.id;
    markChosen();
    void showCharacters(world);
  };
  const refreshWorlds = async (reshow = true) => {
    const listed = await call(api.GET("/worlds"));
    if (!listed.ok || JSON.stringify(listed.data.worlds) === JSON.stringify(session2.worlds)) return;
    const before = session2.worlds.find((world) => world.id === chosen);
    const focused = cards.findIndex((card) => card === document.activeElement);
    const focusedId = focused >= 0 ? session2.worlds[focused].id : void 0;
    session2.worlds = listed.data.worlds;
    saveSession(session2);
    renderWorlds();
    if (focusedId) cards[session2.worlds.findIndex((world) => world.id === focusedId)]?.focus();
    const after = session2.worlds.find((world) => world.id === chosen);
    if (reshow && after && (after.can_access !== before?.can_access || after.can_create !== before?.can_create)) void showCharacters(after);
  };
  const showCharacters = async (world, notice) => {
    const title = h("h2", { text: `Characters in ${world.name}` });
    const status = h("p", { class: "form-error", attrs: { role: "alert", hidden: true } });
    const fail = (detail) => {
      status.textContent = detail;
      status.hidden = false;
    };
    if (!world.can_access) {
      const why = world.access_reason === "invite_required" ? "This world is open by invitation: ask an administrator for access." : ACCESS_TEXT[world.access_reason];
      characters.replaceChildren(title, h("p", { class: "muted", text: why }));
      return;
    }
    characters.replaceChildren(title, h("p", { class: "muted", text: "Loading…" }));
    const listed = await call(api.GET("/characters", { params: { query: { world_id: world.id } } }));
    if (!listed.ok) {
      characters.replaceChildren(title, status);
      return fail(listed.detail);
    }
    const list = h("ul", { class: "character-list" });
    for (const character of listed.data.characters) {
      const play = h("button", { class: "primary", text: "Play", attrs: { type: "button", "aria-label": `Play as ${character.name}`, "data-character-id": String(character.id) } });
      play.addEventListener("click", async () => {
        play.disabled = true;
        const selected = await call(api.POST("/characters/select", { body: { character_id: character.id, world_id: world.id } }));
        play.disabled = false;
        if (!selected.ok) return fail(selected.detail);
        saveSession({ ...session2, character: { name: selected.data.character_name, worldId: world.id } });
        nav2.game();
      });
      list.append(h("li", {}, h("span", { class: "character-name", text: character.name }), play));
    }
    if (listed.data.characters.length === 0) list.append(h("li", { class: "muted", text: "No characters here yet." }));
    const create = h("button", { text: "Create a character", attrs: { type: "button", disabled: !world.can_create } });
    create.addEventListener("click", async () => {
      create.disabled = true;
      const created = await call(api.POST("/characters/create", { body: { world_id: world.id } }));
      create.disabled = false;
      if (!created.ok) return fail(created.detail);
      await refreshWorlds(false);
      await showCharacters(session2.worlds.find((w) => w.id === world.id) ?? world, created.data.message);
      characters.querySelector(`[data-character-id="${created.data.character_id}"]`)?.focus();
    });
    const note = world.can_create ? "New characters get a name from the world." : world.naming_mode === "manual" ? "Characters here are named by the staff." : "You cannot create a character here now.";
    characters.replaceChildren(
      title,
      notice ? h("p", { class: "notice", text: notice, attrs: { role: "status" } }) : "",
      list,
      h("div", { class: "create" }, create, h("small", { class: "muted", text: note })),
      status
    );
  };
  const element = h(
    "div",
    { class: "screen" },
    h("header", { class: "topbar" }, h("span", { class: "brand small" }, h("span", { class: "brand-mark", text: "◆", attrs: { "aria-hidden": "true" } }), " MUD"), h("span", { class: "who-am-i", text: `${session2.username} · ${session2.role}` }), accountButtons(nav2, session2)),
    h("main", { class: "lobby" }, h("section", { class: "worlds" }, heading, worldList), characters)
  );
  renderWorlds();
  const preferred = session2.worlds.find((w) => w.has_existing_character && w.can_access) ?? session2.worlds.find((w) => w.can_access) ?? session2.worlds[0];
  if (preferred) choose(preferred);
  const onFocus = () => void refreshWorlds();
  const onVisibility = () => {
    if (document.visibilityState === "visible") void refreshWorlds();
  };
  window.addEventListener("focus", onFocus);
  document.addEventListener("visibilitychange", onVisibility);
  const timer = setInterval(onFocus, WORLDS_REFRESH_MS);
  return {
    element,
    focus: heading,
    dispose: () => {
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onVisibility);
      clearInterval(timer);
    }
  };
}

// web/main.ts
var root = document.getElementById("app");
var current2 = null;
function show(screen) {
  current2?.dispose?.();
  current2 = screen;
  root.replaceChildren(screen.element);
  screen.focus.focus();
}
function endedScreen(detail) {
  const again = h("button", { class: "primary", text: "Log in again", attrs: { type: "button" }, onClick: () => nav.auth() });
  const heading = h("h1", { text: "Session ended", attrs: { tabindex: "-1" } });
  return { element: h("main", { class: "auth" }, h("section", { class: "card auth-card ended", attrs: { role: "alert" } }, heading, h("p", { text: detail }), again)), focus: again };
}
var nav = {
  auth: (notice) => show(authScreen(nav, notice)),
  lobby: () => {
    const active = session();
    if (!active) return nav.auth();
    const unbound = { ...active, character: void 0 };
    saveSession(unbound);
    show(lobbyScreen(nav, unbound));
  },
  game: () => {
    const active = session();
    if (!active?.character) return nav.lobby();
    show(gameScreen(nav, active));
  },
  ended: (detail) => {
    saveSession(null);
    if (current2?.end) current2.end(detail);
    else show(endedScreen(detail));
  },
  release: () => {
    current2?.dispose?.();
    current2 = null;
  }
};
whenSessionLost((detail) => {
  if (session()) nav.ended(detail);
});
var stored = session();
if (!stored) nav.auth();
else if (!stored.character) nav.lobby();
else {
  const status = await call(api.GET("/status/{session_id}", { params: { path: { session_id: stored.id } } }));
  if (status.ok || status.status === 0) nav.game();
  else if (status.status === 409) nav.lobby();
  else if (status.status !== 401) nav.auth(status.detail);
}
