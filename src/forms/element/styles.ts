/**
 * The shadow root's style sheet. Every themable value reads a `--service-*`
 * custom property: the dashboard's branding sets them on `:host`, and page CSS
 * on the element wins over `:host` rules, so the page always has the last word.
 */
export const baseStyles = `
:host{display:block;box-sizing:border-box;max-width:var(--service-max-width,100%);font-family:var(--service-font,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);color:var(--service-text,#1f2937)}
:host([hidden]){display:none}
*,*::before,*::after{box-sizing:border-box}
.form{display:flex;flex-direction:column;gap:1rem;margin:0}
.card{background:var(--service-bg,#fff);border:1px solid var(--service-border,#d1d5db);border-radius:var(--service-radius,8px);padding:var(--service-padding,1.5rem);box-shadow:var(--service-shadow,0 1px 3px rgba(0,0,0,.08))}
.bare{background:transparent;border:0;padding:0;box-shadow:none}
.title{margin:0;font-size:1.25rem;font-weight:600}
.field{display:flex;flex-direction:column;gap:.35rem}
.label{font-weight:500;color:var(--service-label,inherit)}
.required::after{content:" *" / "";color:var(--service-accent,#2563eb)}
.help{font-size:.85rem;color:var(--service-help,#6b7280)}
.input,.select{font:inherit;color:inherit;width:100%;padding:.55rem .7rem;background:var(--service-bg,#fff);border:1px solid var(--service-border,#d1d5db);border-radius:var(--service-radius,8px)}
textarea.input{min-height:6rem;resize:vertical}
.input:focus,.select:focus,.check input:focus,.submit:focus{outline:2px solid var(--service-accent,#2563eb);outline-offset:1px}
.check{flex-direction:row;align-items:flex-start;gap:.5rem}
.check input{margin-top:.2rem;accent-color:var(--service-accent,#2563eb)}
[aria-invalid="true"]{border-color:#b91c1c}
.field-error{font-size:.85rem;color:#b91c1c}
.field-error:empty{display:none}
.footer{display:flex;flex-direction:column;gap:.5rem}
.submit{font:inherit;font-weight:600;cursor:pointer;align-self:flex-start;padding:.6rem 1.2rem;border:0;border-radius:var(--service-radius,8px);background:var(--service-button-bg,var(--service-accent,#2563eb));color:var(--service-button-text,#fff)}
.submit:disabled{opacity:.6;cursor:progress}
.error{color:#b91c1c}
.error:empty{display:none}
.success{margin:0}
.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
.skeleton{display:flex;flex-direction:column;gap:.8rem}
.bone{height:.9rem;border-radius:4px;background:linear-gradient(90deg,#eee,#f6f6f6,#eee);background-size:200% 100%;animation:shine 1.2s linear infinite}
.bone.tall{height:2.4rem}
.bone.short{width:40%}
@keyframes shine{to{background-position:-200% 0}}
@media (prefers-reduced-motion:reduce){.bone{animation:none}}
.sr{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
`

/** A value the server's branding rule allows: safe characters, no functions that fetch or nest. */
const safeValue = /^[A-Za-z0-9#%.,()\s'"/+*-]{1,200}$/
const forbidden = /(url|expression|image-set|var)\s*\(/i

/** `:host` rules from the dashboard's branding (only the known `--service-*` properties) and the width. */
export const hostStyles = (branding: Readonly<Record<string, string>>, width: string): string => {
  const declarations = Object.entries(branding)
    .filter(([name, value]) => /^--service-[a-z-]{1,30}$/.test(name) && safeValue.test(value) && !forbidden.test(value))
    .map(([name, value]) => `${name}:${value}`)
  return `:host{width:${width};${declarations.join(";")}}`
}

const length = /^[0-9]{1,5}(\.[0-9]{1,3})?(px|rem|em|%|vw|ch)$/

/** `fluid`/`full`/`100%` → 100%; a number → pixels; a CSS length as is; anything else → 100%. */
export const widthOf = (value: string | number | null | undefined): string => {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? `${Math.round(value)}px` : "100%"
  const v = (value ?? "").trim().toLowerCase()
  if (/^[0-9]{1,5}$/.test(v) && Number(v) > 0) return `${v}px`
  return length.test(v) ? v : "100%"
}
