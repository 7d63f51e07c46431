// The admin's launch panel: show the study link with this server's origin, and copy it on a click.
document.addEventListener("DOMContentLoaded", () => {
  for (const code of document.querySelectorAll("code[data-relative]")) {
    code.textContent = window.location.origin + code.dataset.relative;
  }
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const text = document.getElementById(button.dataset.copy).textContent;
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Select the link and copy it";
      }
    });
  }
});
