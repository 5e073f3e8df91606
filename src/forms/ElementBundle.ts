/** The `<service-form>` script, bundled from `src/forms/element/` and served as a public, cacheable script. */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { browserScript } from "../http/BrowserScript.js"

/** Where the script is served (the contract's address: `{base_url}/storage/v1/object/public/widget/v1/`). */
export const elementPath = "/storage/v1/object/public/widget/v1/service-form-element.esm.js"

/** Where `npm run build` puts the component, relative to `dist/`. */
export const builtElementFile = "widget/v1/service-form-element.esm.js"

const script = browserScript({
  name: "form component",
  entry: join(fileURLToPath(new URL("../../", import.meta.url)), "src/forms/element/index.ts"),
  servedAt: elementPath,
  builtFile: builtElementFile
})

export const bundleElement = script.bundle
export const writeElementBundle = script.write
export const ElementRoutes = script.routes
