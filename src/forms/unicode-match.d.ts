// the two name-resolving packages of regexpu (Babel) ship no types
declare module "unicode-match-property-ecmascript" {
  /** The canonical name of a property or its alias (`sc` → `Script`); throws for an unknown one. */
  const matchProperty: (property: string) => string
  export default matchProperty
}
declare module "unicode-match-property-value-ecmascript" {
  /** The canonical value of a property's value or alias (`Script`, `Grek` → `Greek`); throws for an unknown one. */
  const matchPropertyValue: (property: string, value: string) => string
  export default matchPropertyValue
}
