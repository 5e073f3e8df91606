/**
 * Entry of `service-form-element.esm.js`: defines `<service-form>` and the
 * headless helpers `window.Service.form.getConfig` / `submit`. Browser code
 * only: nothing here imports the server, and the server only bundles it.
 */
import { getConfig, ServiceFormError, submit } from "./api.js"
import { ServiceFormElement } from "./ServiceForm.js"

declare global {
  interface Window {
    Service?: { form?: unknown; [other: string]: unknown }
  }
}

if (customElements.get("service-form") === undefined) customElements.define("service-form", ServiceFormElement)

window.Service ??= {}
window.Service.form = { getConfig, submit, ServiceFormError }
