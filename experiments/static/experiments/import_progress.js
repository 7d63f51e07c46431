// While an upload's "Write" request runs, show the import's progress (experiments/items/import_progress.py):
// rows read, items written, the rate and the time left, asked for every second until the page is replaced.
const form = document.getElementById("items-form");
const shown = document.getElementById("import-progress");
if (form && shown) {
  form.addEventListener("submit", (event) => {
    if (!event.submitter || event.submitter.name !== "write") return;
    const token = form.querySelector("input[name=upload]");
    if (!token) return;
    const url = `${shown.dataset.url}?upload=${encodeURIComponent(token.value)}`;
    shown.textContent = "Writing…";
    setInterval(async () => {
      try {
        const answer = await fetch(url, { credentials: "same-origin" });
        const body = await answer.json();
        if (body.progress) shown.textContent = `Writing: ${body.progress}`;
      } catch (error) {
        // the next tick asks again; the write itself goes on regardless
      }
    }, 1000);
  });
}
