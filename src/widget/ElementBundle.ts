/** The `<service-chat>` script, bundled from `src/widget/element/` and served beside the form's, as the form's is. */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { browserScript } from "../http/BrowserScript.js"

export { gzippedSize } from "../http/BrowserScript.js"

/** Where the script is served (beside `service-form-element.esm.js`). */
export const chatElementPath = "/storage/v1/object/public/widget/v1/service-chat-element.esm.js"

/** The script's budget, gzipped: the build fails past it. */
export const maxChatScriptGzipBytes = 30 * 1024

/** Where `npm run build` puts the component, relative to `dist/`. */
export const builtChatElementFile = "widget/v1/service-chat-element.esm.js"

const script = browserScript({
  name: "chat component",
  entry: join(fileURLToPath(new URL("../../", import.meta.url)), "src/widget/element/index.ts"),
  servedAt: chatElementPath,
  builtFile: builtChatElementFile,
  maxGzipBytes: maxChatScriptGzipBytes
})

export const bundleChatElement = script.bundle
export const writeChatElementBundle = script.write
export const ChatElementRoutes = script.routes
