/**
 * Entry of `service-chat-element.esm.js`: defines `<service-chat>`. Browser
 * code only: nothing here imports the server, and the server only bundles it.
 */
import { ServiceChatElement } from "./ServiceChat.js"

if (customElements.get("service-chat") === undefined) customElements.define("service-chat", ServiceChatElement)
