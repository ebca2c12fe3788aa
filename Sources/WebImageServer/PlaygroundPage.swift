/// `GET /`: the playground page (a source URL field, size/fit/format controls, the result with its
/// size, format and timing), using only the service's own endpoints.
enum PlaygroundPage {
    /// The page, self-contained (no external scripts or styles).
    static let html = """
    <!doctype html>
    <html lang="en">
    <head><meta charset="utf-8"><title>webimage serve</title>
    <style>body{font:14px system-ui,sans-serif;margin:2em}label{margin-right:1em}#out{margin-top:1em}</style></head>
    <body>
    <h1>webimage serve</h1>
    <form id="form">
    <label>Source URL <input id="url" size="60" required></label>
    <label>w <input id="w" type="number" min="1" max="8192" value="300" size="5"></label>
    <label>h <input id="h" type="number" min="1" max="8192" value="300" size="5"></label>
    <label>fit <select id="fit"><option>contain</option><option>cover</option><option>fill</option></select></label>
    <label>format <select id="format"><option>auto</option><option>jpeg</option><option>png</option><option>webp</option><option>avif</option></select></label>
    <button>Render</button>
    </form>
    <div id="out"><img id="result" alt=""><p id="info"></p></div>
    <script>
    document.getElementById('form').addEventListener('submit', async (event) => {
      event.preventDefault();
      const query = new URLSearchParams();
      query.set('url', document.getElementById('url').value);
      for (const name of ['w', 'h']) { const value = document.getElementById(name).value; if (value) query.set(name, value); }
      query.set('fit', document.getElementById('fit').value);
      query.set('format', document.getElementById('format').value);
      const started = performance.now();
      const response = await fetch('/image?' + query.toString());
      const info = document.getElementById('info');
      if (!response.ok) { info.textContent = response.status + ' ' + (await response.text()); return; }
      const blob = await response.blob();
      const image = document.getElementById('result');
      image.onload = () => {
        info.textContent = image.naturalWidth + '×' + image.naturalHeight + ', ' + response.headers.get('Content-Type') +
          ', ' + blob.size + ' bytes, ' + Math.round(performance.now() - started) + ' ms';
      };
      image.src = URL.createObjectURL(blob);
    });
    </script>
    </body>
    </html>
    """
}
