// The dashboard's Copy buttons: a button[data-copy] copies the value of
// the field whose id it names to the clipboard and says so in the status
// element [data-copy-status] of the same id. No inline script: the CSP
// allows none.
"use strict";
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) {
    return;
  }
  const id = button.dataset.copy;
  const field = document.getElementById(id);
  const status = document.querySelector(`[data-copy-status="${CSS.escape(id)}"]`);
  if (!field) {
    return;
  }
  try {
    await navigator.clipboard.writeText(field.value);
    if (status) {
      status.textContent = "Copied to the clipboard.";
    }
  } catch {
    field.select();
    if (status) {
      status.textContent = "Could not copy: the text is selected, copy it with your keyboard.";
    }
  }
});
