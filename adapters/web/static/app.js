// The codegen-chat page: one conversation's thread, the list of conversations, and the run's side panel.
//
// Everything shown comes from the bot's stream (/api/stream, server-sent events): a snapshot when the page
// connects (or reconnects, after a reload or a dropped connection), then changes. Text written by models is
// untrusted: Markdown is rendered with raw HTML shown as text, then sanitised by DOMPurify; everything else
// (file names, test output, titles) is set as text, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const state = {
    session: null,
    key: null,
    source: null,
    messages: new Map(), // id -> {data, element}
    panel: {},
    pending: [], // files picked for the next task: {name, size, data (base64)}
    drawQueued: new Set(),
  };

  // -- Markdown, as untrusted input ----------------------------------------------------------

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  // "python path=app.py", "python app.py", "app.py": the language and the file a block is captioned with.
  function codeInfo(info) {
    const words = (info || "").trim().split(/\s+/).filter(Boolean);
    let language = "";
    let file = "";
    for (const word of words) {
      const named = word.match(/^(?:path|file|filename|title)=["']?([^"']+)["']?$/);
      if (named) file = named[1];
      else if (!language && !word.includes(".") && !word.includes("/")) language = word.toLowerCase();
      else if (!file) file = word;
    }
    if (!language && file.includes(".")) language = file.split(".").pop().toLowerCase();
    return { language, file };
  }

  function highlighted(text, language) {
    if (window.hljs && language && hljs.getLanguage(language)) {
      return hljs.highlight(text, { language, ignoreIllegals: true }).value;
    }
    return escapeHtml(text);
  }

  function codeBlock(text, info) {
    const { language, file } = codeInfo(info);
    const caption = file ? `<figcaption>${escapeHtml(file)}</figcaption>` : "";
    return `<figure class="code">${caption}<pre><code class="hljs">${highlighted(text, language)}</code></pre></figure>`;
  }

  // A link whose text names an address other than its target's host shows its target beside it: the rule
  // of bot/chat/links.py (which the server applies to Markdown it can read), applied here to every link
  // marked itself makes (inline, titled, <...> targets, parentheses, reference-style), as the page shows it.
  const ADDRESS = /(?:[a-z][a-z0-9+.-]*:\/\/)?((?:[a-z0-9-]+\.)+[a-z]{2,})\b/gi;

  function deceptive(text, href) {
    const named = [...text.matchAll(ADDRESS)].map((m) => m[1].toLowerCase());
    if (!named.length) return false;
    let host = "";
    try {
      host = new URL(href).hostname.toLowerCase();
    } catch {
      host = ""; // no absolute address: nothing the named one could be
    }
    return !named.every((name) => host === name || host.endsWith(`.${name}`));
  }

  function link({ href, tokens, text }) {
    if (!deceptive(text || "", href || "")) return false; // marked's own rendering
    const shown = escapeHtml(href);
    return `${this.parser.parseInline(tokens)} (<a href="${shown}">${shown}</a>)`;
  }

  marked.use({
    gfm: true,
    breaks: true, // a chat message's line breaks are meant: "Tests: …" and "Tokens: …" are separate lines
    renderer: {
      html: ({ text }) => escapeHtml(text), // raw HTML from a model is shown as written, never run
      code: ({ text, lang }) => codeBlock(text, lang),
      image: ({ href, text }) => escapeHtml(text || href), // no images from elsewhere
      link,
    },
  });

  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("rel", "noopener noreferrer");
      node.setAttribute("target", "_blank");
    }
  });

  function renderMarkdown(markdown) {
    return DOMPurify.sanitize(marked.parse(markdown), {
      FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "img", "svg", "math"],
      FORBID_ATTR: ["style"],
      ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/(?!\/))/i,
    });
  }

  // -- the thread ---------------------------------------------------------------------------

  function drawMessage(id) {
    const entry = state.messages.get(id);
    if (!entry) return;
    const { data } = entry;
    let element = entry.element;
    if (!element) {
      element = document.createElement("article");
      element.id = `m-${data.id}`;
      $("thread").appendChild(element);
      entry.element = element;
    }
    element.className = `message ${data.author === "you" ? "you" : "bot"}`;
    element.dataset.run = data.stop || "";
    element.replaceChildren();
    const body = document.createElement("div");
    body.className = "body";
    if (data.author === "you") {
      body.textContent = data.text;
      for (const name of data.attached || []) {
        const chip = document.createElement("span");
        chip.className = "chip";
        chip.textContent = `📎 ${name}`;
        body.appendChild(chip);
      }
    } else {
      body.innerHTML = renderMarkdown(data.text);
    }
    element.appendChild(body);
    for (const [name, content] of Object.entries(data.files || {})) {
      element.appendChild(fileView(name, content, ""));
    }
    if (data.stop) {
      const stop = document.createElement("button");
      stop.type = "button";
      stop.className = "stop";
      stop.textContent = "Stop";
      stop.addEventListener("click", () => stopRun(data.stop, stop));
      element.appendChild(stop);
    }
  }

  function scheduleDraw(id) {
    if (state.drawQueued.has(id)) return;
    state.drawQueued.add(id);
    requestAnimationFrame(() => {
      state.drawQueued.delete(id);
      const nearBottom = isNearBottom();
      drawMessage(id);
      updateStop();
      if (nearBottom) scrollToBottom();
    });
  }

  function isNearBottom() {
    const scroller = document.scrollingElement;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 200;
  }

  function scrollToBottom() {
    window.scrollTo(0, document.scrollingElement.scrollHeight);
  }

  function fileView(name, content, badge) {
    const details = document.createElement("details");
    details.className = "file";
    const summary = document.createElement("summary");
    const label = document.createElement("span");
    label.className = "file-name";
    label.textContent = name;
    summary.appendChild(label);
    if (badge) {
      const mark = document.createElement("span");
      mark.className = `badge ${badge === "your test" ? "yours" : "test"}`;
      mark.textContent = badge;
      summary.appendChild(mark);
    }
    details.appendChild(summary);
    details.addEventListener("toggle", () => {
      if (details.open && !details.querySelector("pre")) {
        const pre = document.createElement("pre");
        const code = document.createElement("code");
        code.className = "hljs";
        code.innerHTML = highlighted(content, codeInfo(name).language); // escaped by highlight.js or by us
        pre.appendChild(code);
        details.appendChild(pre);
      }
    });
    return details;
  }

  // -- ops from the stream ------------------------------------------------------------------

  function apply(op) {
    switch (op.type) {
      case "snapshot":
        state.messages.clear();
        $("thread").replaceChildren();
        if (!op.messages.length) $("thread").appendChild(welcome);
        for (const data of op.messages) {
          state.messages.set(data.id, { data, element: null });
          drawMessage(data.id);
        }
        state.panel = op.panel || {};
        drawPanel();
        drawList(op.conversations || []);
        $("working").textContent = op.working || "";
        $("working").hidden = !op.working;
        updateStop();
        scrollToBottom();
        break;
      case "message": {
        welcome.remove();
        const entry = state.messages.get(op.message.id);
        if (entry) entry.data = op.message;
        else state.messages.set(op.message.id, { data: op.message, element: null });
        scheduleDraw(op.message.id);
        break;
      }
      case "edit": {
        const entry = state.messages.get(op.id);
        if (!entry) break;
        entry.data.text = entry.data.text.slice(0, op.keep) + op.text;
        entry.data.stop = op.stop;
        scheduleDraw(op.id);
        break;
      }
      case "remove": {
        const entry = state.messages.get(op.id);
        if (entry && entry.element) entry.element.remove();
        state.messages.delete(op.id);
        updateStop();
        break;
      }
      case "panel":
        state.panel = Object.assign({}, state.panel, op.panel);
        drawPanel();
        break;
      case "conversations":
        drawList(op.conversations);
        break;
      case "working":
        $("working").textContent = op.text;
        $("working").hidden = !op.text;
        break;
    }
  }

  const welcome = $("welcome");

  function connect(key) {
    if (state.source) state.source.close();
    state.key = key;
    const source = new EventSource(key ? `/api/stream?c=${encodeURIComponent(key)}` : "/api/stream");
    state.source = source;
    source.onopen = () => showConnection("");
    source.onmessage = (event) => apply(JSON.parse(event.data));
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // A refusal (the conversation is not this person's, or signing in is needed): ask once why.
        fetch(key ? `/api/conversations/${encodeURIComponent(key)}` : "/api/session").then((r) => {
          if (r.status === 401) window.location.assign("/login");
          else if (r.status === 404) showConnection("No such conversation: it may have been started by someone else, or not at all.");
          else setTimeout(() => state.source === source && connect(key), 2000);
        }, () => setTimeout(() => state.source === source && connect(key), 2000));
      } else {
        showConnection("Connection lost; reconnecting…");
      }
    };
  }

  function showConnection(text) {
    $("connection").textContent = text;
    $("connection").hidden = !text;
  }

  // -- the conversation list ----------------------------------------------------------------

  const STATUS_MARKS = { passed: "✅", failed: "❌", stopped: "⏹️", error: "⚠️", interrupted: "⏸️", running: "⏳" };

  function drawList(conversations) {
    const list = $("conversations");
    list.replaceChildren();
    for (const item of conversations) {
      const li = document.createElement("li");
      const link = document.createElement("a");
      link.href = `/c/${encodeURIComponent(item.key)}`;
      link.className = item.key === state.key ? "current" : "";
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.textContent = STATUS_MARKS[item.status] || "";
      const title = document.createElement("span");
      title.className = "title";
      title.textContent = firstLine(item.title);
      link.append(mark, title);
      link.title = item.title;
      link.addEventListener("click", (event) => {
        event.preventDefault();
        openConversation(item.key);
      });
      li.appendChild(link);
      list.appendChild(li);
    }
  }

  function firstLine(text) {
    const line = (text || "").split("\n").find((l) => l.trim()) || "(empty)";
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }

  function openConversation(key) {
    const path = key ? `/c/${encodeURIComponent(key)}` : "/";
    if (window.location.pathname !== path) history.pushState({ key }, "", path);
    setProblem("");
    connect(key);
  }

  // -- the side panel -----------------------------------------------------------------------

  function drawPanel() {
    const panel = state.panel || {};
    const status = $("status");
    status.replaceChildren();
    if (!panel.status) {
      status.textContent = "No run yet.";
    } else {
      const word = document.createElement("strong");
      word.className = `status ${panel.status}`;
      word.textContent = `${STATUS_MARKS[panel.status] || ""} ${panel.status}`;
      status.appendChild(word);
      if (panel.reason) status.append(` — ${panel.reason}`);
    }
    drawResult(panel);
    drawUsage(panel);
    drawRounds(panel.runs || []);
    drawFiles(panel.files || []);
  }

  function drawResult(panel) {
    const result = $("result");
    result.replaceChildren();
    if (panel.gist) {
      const link = document.createElement("a");
      link.href = panel.gist;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      link.className = "gist";
      link.textContent = "The Gist";
      result.append(link, " ");
    }
    if (panel.zip) {
      const link = document.createElement("a");
      link.href = panel.zip;
      link.className = "zip";
      link.textContent = "Download the files (zip)";
      result.appendChild(link);
    }
    $("result-section").hidden = !(panel.gist || panel.zip);
  }

  function drawUsage(panel) {
    const usage = panel.usage;
    $("usage-section").hidden = !usage;
    if (!usage) return;
    const cost = usage.cost ? ` · about $${usage.cost.toFixed(4)}` : "";
    const mark = usage.estimated ? "~" : "";  // counted from the text: the model server reported no usage
    $("usage").textContent = `${mark}${usage.in.toLocaleString()} in / ${mark}${usage.out.toLocaleString()} out` +
      `${usage.estimated ? " (estimated)" : ""}${cost}`;
  }

  function drawRounds(runs) {
    const list = $("rounds");
    list.replaceChildren();
    let count = 0;
    runs.forEach((run, index) => {
      for (const round of run.rounds) {
        count += 1;
        const li = document.createElement("li");
        li.className = round.ok ? "passed" : "failed";
        const head = document.createElement("div");
        const where = runs.length > 1 ? `run ${index + 1}, round ${round.round}` : `round ${round.round}`;
        head.textContent = `${round.ok ? "✅" : "❌"} ${where}: ${round.summary}`;
        li.appendChild(head);
        if (round.output) {
          const details = document.createElement("details");
          const summary = document.createElement("summary");
          summary.textContent = "failing output";
          const pre = document.createElement("pre");
          pre.textContent = round.output;
          details.append(summary, pre);
          li.appendChild(details);
        }
        list.appendChild(li);
      }
    });
    $("tests-section").hidden = count === 0;
  }

  function drawFiles(files) {
    const list = $("files-list");
    list.replaceChildren();
    for (const file of files) {
      const li = document.createElement("li");
      li.appendChild(fileView(file.name, file.content, file.yours ? "your test" : file.test ? "test" : ""));
      list.appendChild(li);
    }
    $("files-section").hidden = files.length === 0;
  }

  // The run that can be stopped now: the message carrying its Stop control.
  function updateStop() {
    let run = "";
    for (const { data } of state.messages.values()) if (data.stop) run = data.stop;
    const stop = $("stop");
    stop.hidden = !run;
    stop.dataset.run = run;
  }

  async function stopRun(run, button) {
    if (button) button.disabled = true;
    const answer = await post(`/api/runs/${encodeURIComponent(run)}/stop`, {});
    if (answer.error) setProblem(answer.error);
    if (button) button.disabled = false;
  }

  // -- sending a task -----------------------------------------------------------------------

  async function post(url, body) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (response.status === 401) {
        window.location.assign("/login");
        return { error: "Sign in first." };
      }
      const data = await response.json().catch(() => ({}));
      if (!response.ok) return { error: data.error || `The bot answered ${response.status}; try again.` };
      return data;
    } catch (_) {
      return { error: "The bot cannot be reached; is it still running?" };
    }
  }

  function setProblem(text) {
    $("problem").textContent = text;
    $("problem").hidden = !text;
  }

  async function send(event) {
    event.preventDefault();
    const text = $("task").value;
    if (!text.trim()) {
      setProblem("The task is empty: say what the code should do.");
      return;
    }
    $("send").disabled = true;
    const files = state.pending.map((f) => ({ name: f.name, data: f.data }));
    const url = state.key ? `/api/conversations/${encodeURIComponent(state.key)}/tasks` : "/api/conversations";
    const answer = await post(url, { task: text, files });
    $("send").disabled = false;
    if (answer.error) {
      setProblem(answer.error);
      return;
    }
    setProblem("");
    $("task").value = "";
    state.pending = [];
    drawPending();
    if (answer.conversation !== state.key) openConversation(answer.conversation);
  }

  function readAsBase64(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  async function addFiles(fileList) {
    const limits = state.session || {};
    for (const file of fileList) {
      if (limits.max_attachment_bytes && file.size > limits.max_attachment_bytes) {
        setProblem(`${file.name} is too large: attachments are limited to ${limits.max_attachment_bytes.toLocaleString()} bytes.`);
        continue;
      }
      if (limits.max_attachments !== undefined && state.pending.length >= limits.max_attachments) {
        setProblem(`${state.pending.length + 1} files attached; the limit is ${limits.max_attachments}.`);
        break;
      }
      try {
        state.pending.push({ name: file.name, size: file.size, data: await readAsBase64(file) });
        setProblem("");
      } catch (_) {
        setProblem(`${file.name} could not be read.`);
      }
    }
    drawPending();
  }

  function drawPending() {
    const list = $("attached");
    list.replaceChildren();
    state.pending.forEach((file, index) => {
      const li = document.createElement("li");
      li.className = "chip";
      li.textContent = `📎 ${file.name} `;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "×";
      remove.title = `Remove ${file.name}`;
      remove.addEventListener("click", () => {
        state.pending.splice(index, 1);
        drawPending();
      });
      li.appendChild(remove);
      list.appendChild(li);
    });
  }

  // -- wiring -------------------------------------------------------------------------------

  function keyFromPath() {
    const match = window.location.pathname.match(/^\/c\/([^/]+)$/);
    return match ? decodeURIComponent(match[1]) : null;
  }

  $("composer").addEventListener("submit", send);
  $("task").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send(event);
  });
  $("files").addEventListener("change", async (event) => {
    await addFiles(event.target.files);
    event.target.value = "";
  });
  $("main").addEventListener("dragover", (event) => event.preventDefault());
  $("main").addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) addFiles(event.dataTransfer.files);
  });
  $("new-conversation").addEventListener("click", () => openConversation(null));
  $("stop").addEventListener("click", () => stopRun($("stop").dataset.run, $("stop")));
  window.addEventListener("popstate", () => connect(keyFromPath()));

  fetch("/api/session").then((r) => r.json()).then((session) => {
    state.session = session;
    $("who").textContent = session.user === "local" ? "" : `Signed in as ${session.user}`;
    $("sign-out").hidden = !session.sign_in; // the token's session; a sign-in proxy signs people out itself
  }, () => {});
  connect(keyFromPath());
})();
