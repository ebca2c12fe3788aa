import Hummingbird
import NIOCore

/// `GET /`: a small gallery and playground over the service's own `GET /image`.
///
/// One self-contained HTML document (inline script and style, no third-party assets) so the page
/// works on an offline machine and behind any reverse proxy: it calls `image?…` relative to its own
/// address. It shows the source at the chosen settings and at a few presets, each with its pixel
/// size, byte size, `Content-Type`, time to the last byte and, behind the nginx fleet, the proxy
/// cache status. `/?url=U&w=W&h=H&fit=F&format=X&q=Q` (and any other control's parameter:
/// `gravity`, `focus`, `dpr`, `crop`, `rotate`, `flip`, `blur`, `sharpen`, `bg`, `progressive`,
/// `wm`) fills the form and renders at once (links and the end-to-end test use that). Its requests
/// send the `Accept` a browser sends for images, so `format=auto` shows what a page would get. When every picture has settled, `body[data-state]` is `done` and
/// each figure carries `data-natural-width` (0 when it failed) and `data-status`.
public enum PlaygroundPage {
    /// Registers `GET /` on `router` (`HEAD /` comes with the router's generated HEAD endpoints).
    public static func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/") { _, _ in response }
    }

    /// The page as a response: HTML, revalidated on every load, scripts limited by a CSP to the
    /// inline one and to requests back to this origin.
    public static var response: Response {
        Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    private static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-cache",
        .contentSecurityPolicy: "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            + "img-src 'self' blob:; connect-src 'self'; form-action 'self'; base-uri 'none'",
    ]

    /// The document. Results are written with `textContent` only: a hostile source URL or error
    /// message is never parsed as markup.
    public static let html = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>webimage serve: playground</title>
    <style>
    body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; background: #fafafa; }
    h1 { font-size: 1.3rem; margin: 0 0 1rem; }
    form { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
    label { display: flex; flex-direction: column; font-size: .8rem; color: #555; }
    input, select, button { font: inherit; padding: .25rem .4rem; }
    input[name=url] { width: min(40rem, 90vw); }
    input[type=number] { width: 5.5rem; }
    input.short { width: 7rem; }
    #gallery { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
    figure { margin: 0; padding: .5rem; background: #fff; border: 1px solid #ddd; border-radius: 4px; max-width: 100%; }
    figure img { display: block; max-width: 100%; background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
    figcaption { font-size: .8rem; color: #444; margin-top: .35rem; }
    figcaption b { display: block; color: #222; }
    .error { color: #b00020; }
    .hint { font-size: .8rem; color: #555; }
    #health { font-size: .8rem; color: #555; margin-left: .5rem; }
    </style>
    </head>
    <body data-state="idle">
    <h1>webimage serve <span id="health"></span></h1>
    <form id="controls">
      <label>Source URL <input name="url" type="url" required placeholder="https://example.com/photo.jpg"></label>
      <label>Width <input name="w" type="number" min="1" placeholder="auto"></label>
      <label>Height <input name="h" type="number" min="1" placeholder="auto"></label>
      <label>Fit <select name="fit"><option>contain</option><option>cover</option><option>fill</option><option>pad</option></select></label>
      <label>Gravity <select name="gravity"><option value="">center</option><option>top</option><option>bottom</option><option>left</option><option>right</option><option>top-left</option><option>top-right</option><option>bottom-left</option><option>bottom-right</option><option>smart</option></select></label>
      <label>Focus <input name="focus" class="short" placeholder="X,Y (0...1)"></label>
      <label>DPR <input name="dpr" type="number" min="1" max="5" step="0.25" placeholder="1"></label>
      <label>Crop <input name="crop" class="short" placeholder="X,Y,W,H"></label>
      <label>Rotate <select name="rotate"><option value="">0</option><option>90</option><option>180</option><option>270</option></select></label>
      <label>Flip <select name="flip"><option value="">none</option><option>h</option><option>v</option><option>hv</option></select></label>
      <label>Blur <input name="blur" type="number" min="0.3" max="100" step="0.1" placeholder="none"></label>
      <label>Sharpen <input name="sharpen" type="number" min="0.3" max="10" step="0.1" placeholder="none"></label>
      <label>Background <input name="bg" class="short" placeholder="RRGGBB[AA]"></label>
      <label>Format <select name="format"><option>auto</option><option>jpeg</option><option>png</option><option>webp</option><option>avif</option><option>gif</option><option>jxl</option></select></label>
      <label>Quality <input name="q" type="number" min="1" max="100" placeholder="default"></label>
      <label>Progressive <select name="progressive"><option value="">no</option><option value="1">yes</option></select></label>
      <label>Watermark <input name="wm" type="number" min="0" max="1" step="0.05" placeholder="opacity"></label>
      <button type="submit">Render</button>
    </form>
    <p class="hint">Each picture is one <code>GET /image?url=…&amp;w=…&amp;h=…&amp;fit=…&amp;format=…&amp;q=…</code> (with the other controls' parameters when set), sent with the <code>Accept</code> a browser sends for images; its caption shows the size, type and time of that response.</p>
    <div id="gallery"></div>
    <script>
    "use strict";
    const form = document.getElementById("controls");
    const gallery = document.getElementById("gallery");
    const fields = ["url", "w", "h", "fit", "gravity", "focus", "dpr", "crop", "rotate", "flip", "blur", "sharpen", "bg",
                    "format", "q", "progressive", "wm"];
    // What Chromium sends for an <img>: format=auto negotiates as it would for a page.
    const imageAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8";
    // The gallery: the chosen settings first, then presets at the same source and format.
    const presets = [
      { label: "thumbnail 150x150 cover", w: "150", h: "150", fit: "cover" },
      { label: "300 wide", w: "300", h: "", fit: "contain" },
      { label: "200x200 fill", w: "200", h: "200", fit: "fill" },
    ];
    let objectURLs = [];

    function imageURL(settings) {
      const query = new URLSearchParams();
      for (const name of fields) {
        if (settings[name]) query.set(name, settings[name]);
      }
      return "image?" + query.toString();
    }

    function line(parent, text, className) {
      const element = document.createElement(className === "title" ? "b" : "span");
      element.textContent = text;
      if (className && className !== "title") element.className = className;
      parent.append(element, document.createElement("br"));
    }

    function formatBytes(count) {
      return count >= 1024 ? (count / 1024).toFixed(1) + " KiB" : count + " B";
    }

    // Resolves at the picture's load event, when its size is known. Not `img.decode()`: that
    // waits for a decode on the browser's raster threads, which headless Chromium's virtual time
    // does not wait for, so a page dumped at the end of its budget could show a picture pending.
    function loaded(img, source) {
      return new Promise((resolve, reject) => {
        img.onload = resolve;
        img.onerror = () => reject(new Error("the browser could not show the image"));
        img.src = source;
      });
    }

    async function render(label, settings) {
      const figure = document.createElement("figure");
      const img = document.createElement("img");
      const caption = document.createElement("figcaption");
      const address = imageURL(settings);
      figure.dataset.status = "pending";
      figure.dataset.naturalWidth = "0";
      figure.dataset.src = address;
      img.alt = label;
      line(caption, label, "title");
      figure.append(img, caption);
      gallery.append(figure);
      const started = performance.now();
      try {
        const response = await fetch(address, { headers: { Accept: imageAccept } });
        const body = await response.blob();
        const elapsed = performance.now() - started;
        figure.dataset.status = String(response.status);
        if (!response.ok) {
          let message = response.status + " " + response.statusText;
          try {
            const error = JSON.parse(await body.text()).error;
            message = response.status + " " + error.code + ": " + error.message;
          } catch (_) {}
          line(caption, message, "error");
          return;
        }
        const objectURL = URL.createObjectURL(body);
        objectURLs.push(objectURL);
        await loaded(img, objectURL);
        figure.dataset.naturalWidth = String(img.naturalWidth);
        figure.dataset.naturalHeight = String(img.naturalHeight);
        line(caption, img.naturalWidth + " x " + img.naturalHeight + " px, " + formatBytes(body.size));
        line(caption, (response.headers.get("Content-Type") || "unknown type") + ", " + elapsed.toFixed(0) + " ms");
        const cache = response.headers.get("X-Cache-Status");
        if (cache) line(caption, "proxy cache: " + cache);
      } catch (error) {
        if (figure.dataset.status === "pending") figure.dataset.status = "failed";
        line(caption, String(error), "error");
      }
    }

    async function renderAll(settings) {
      for (const objectURL of objectURLs) URL.revokeObjectURL(objectURL);
      objectURLs = [];
      gallery.replaceChildren();
      document.body.dataset.state = "loading";
      const chosen = [settings.w && "w " + settings.w, settings.h && "h " + settings.h, settings.fit, settings.format]
        .filter(Boolean).join(", ");
      const jobs = [render("chosen: " + chosen, settings)];
      for (const preset of presets) {
        jobs.push(render(preset.label, { ...settings, w: preset.w, h: preset.h, fit: preset.fit }));
      }
      await Promise.allSettled(jobs);
      document.body.dataset.state = "done";
    }

    function settingsFromForm() {
      const data = new FormData(form);
      const settings = {};
      for (const name of fields) settings[name] = String(data.get(name) || "").trim();
      return settings;
    }

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const settings = settingsFromForm();
      history.replaceState(null, "", "?" + new URLSearchParams(Object.entries(settings).filter(([, v]) => v)).toString());
      renderAll(settings);
    });

    fetch("healthz").then((response) => {
      document.getElementById("health").textContent = response.ok ? "(healthy)" : "(health check: " + response.status + ")";
    }).catch(() => { document.getElementById("health").textContent = "(unreachable)"; });

    const initial = new URLSearchParams(location.search);
    for (const name of fields) {
      const value = initial.get(name);
      if (value !== null) form.elements[name].value = value;
    }
    if (initial.get("url")) renderAll(settingsFromForm());
    </script>
    </body>
    </html>
    """
}
