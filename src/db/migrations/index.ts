/** Every migration, in order. Ids are the numeric prefixes; never renumber. */
import foundation from "./0001_foundation.js"

export const migrations = {
  "0001_foundation": foundation
}
