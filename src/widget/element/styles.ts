/**
 * The shadow root's style sheets, adopted as constructable sheets (no `<style>`
 * element, no `style` attribute: a page's strict CSP without `unsafe-inline`
 * applies to neither). Every themable value reads a `--service-chat-*` custom
 * property; the agent's colour is set on `:host` by a second sheet, and page
 * CSS on the element wins over `:host` rules, so the page has the last word.
 */
export const baseStyles = `
:host{display:block;--sc-accent:var(--service-chat-accent,#2563eb);--sc-accent-text:var(--service-chat-accent-text,#fff);--sc-bg:var(--service-chat-bg,#fff);--sc-text:var(--service-chat-text,#1f2937);--sc-muted:var(--service-chat-muted,#4b5563);--sc-bubble:var(--service-chat-bubble,#f3f4f6);--sc-border:var(--service-chat-border,#d1d5db);--sc-radius:var(--service-chat-radius,12px);--sc-error:var(--service-chat-error,#b91c1c);
font-family:var(--service-chat-font,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);font-size:15px;line-height:1.4;color:var(--sc-text)}
.root{position:fixed;z-index:var(--service-chat-z-index,2147483000);bottom:var(--service-chat-offset,1rem);right:var(--service-chat-offset,1rem)}
.root.left{right:auto;left:var(--service-chat-offset,1rem)}
:host([hidden]){display:none}
@media (prefers-color-scheme:dark){:host{--sc-bg:var(--service-chat-bg,#111827);--sc-text:var(--service-chat-text,#f9fafb);--sc-muted:var(--service-chat-muted,#d1d5db);--sc-bubble:var(--service-chat-bubble,#1f2937);--sc-border:var(--service-chat-border,#4b5563);--sc-error:var(--service-chat-error,#fca5a5)}}
*,*::before,*::after{box-sizing:border-box}
button,input,textarea{font:inherit;color:inherit}
.launcher{display:flex;align-items:center;justify-content:center;width:3.5rem;height:3.5rem;border-radius:50%;border:0;cursor:pointer;background:var(--sc-accent);color:var(--sc-accent-text);box-shadow:0 4px 14px rgba(0,0,0,.25);transition:transform .15s ease}
.launcher:hover{transform:scale(1.05)}
.launcher svg{width:1.6rem;height:1.6rem;fill:currentColor}
:focus-visible{outline:2px solid var(--sc-accent);outline-offset:2px}
.launcher:focus-visible{outline-color:var(--sc-text)}
.panel{position:absolute;bottom:4.25rem;right:0;display:flex;flex-direction:column;width:min(24rem,calc(100vw - 2 * var(--service-chat-offset,1rem)));height:min(36rem,calc(100vh - 6rem));background:var(--sc-bg);color:var(--sc-text);border:1px solid var(--sc-border);border-radius:var(--sc-radius);box-shadow:0 8px 30px rgba(0,0,0,.25);overflow:hidden;animation:rise .18s ease-out}
.left .panel{right:auto;left:0}
.panel[hidden]{display:none}
@keyframes rise{from{opacity:0;transform:translateY(.5rem)}}
.header{display:flex;align-items:center;gap:.5rem;padding:.75rem 1rem;background:var(--sc-accent);color:var(--sc-accent-text)}
.title{flex:1;margin:0;font-size:1rem;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.close{border:0;background:transparent;color:inherit;cursor:pointer;font-size:1.4rem;line-height:1;width:2.75rem;height:2.75rem;border-radius:50%}
.log{flex:1;overflow-y:auto;padding:1rem;display:flex;flex-direction:column;gap:.6rem}
.msg{max-width:85%;padding:.55rem .8rem;border-radius:var(--sc-radius);background:var(--sc-bubble);white-space:pre-wrap;overflow-wrap:anywhere}
.msg.user{align-self:flex-end;background:var(--sc-accent);color:var(--sc-accent-text)}
.msg.assistant,.msg.member,.msg.welcome{align-self:flex-start}
.msg.member{border:2px solid var(--sc-accent)}
.who{display:block;font-size:.75rem;font-weight:600;color:var(--sc-muted)}
.notice{align-self:stretch;font-size:.85rem;color:var(--sc-muted);text-align:center}
.notice.error{color:var(--sc-error)}
.typing::after{content:"";display:inline-block;width:1.5em;height:.6em;background:radial-gradient(circle,currentColor 40%,transparent 42%) 0 50%/0.5em 0.5em repeat-x;opacity:.6;animation:dots 1s steps(3) infinite}
@keyframes dots{from{width:.5em}to{width:2em}}
.sources{margin:.4rem 0 0;padding:0;list-style:none;font-size:.8rem;display:flex;flex-wrap:wrap;gap:.3rem .6rem}
.sources a{color:inherit}
.rating{display:flex;gap:.3rem;margin-top:.35rem}
.rate{border:1px solid var(--sc-border);background:var(--sc-bg);border-radius:999px;padding:.2rem .6rem;font-size:.8rem;cursor:pointer;min-height:2rem}
.rate[aria-pressed="true"]{background:var(--sc-accent);color:var(--sc-accent-text);border-color:var(--sc-accent)}
.ask{display:flex;flex-direction:column;gap:.4rem;padding:.75rem 1rem;border-top:1px solid var(--sc-border)}
.ask[hidden]{display:none}
.ask label{font-size:.85rem}
.ask input{padding:.45rem .6rem;border:1px solid var(--sc-border);border-radius:8px;background:var(--sc-bg)}
.row{display:flex;gap:.5rem;justify-content:flex-end}
.footer{display:flex;flex-direction:column;gap:.4rem;padding:.6rem .75rem;border-top:1px solid var(--sc-border)}
.compose{display:flex;gap:.5rem;align-items:flex-end}
.input{flex:1;resize:none;min-height:2.75rem;max-height:8rem;padding:.6rem .7rem;border:1px solid var(--sc-border);border-radius:8px;background:var(--sc-bg)}
.send,.primary{border:0;border-radius:8px;padding:.6rem 1rem;min-height:2.75rem;background:var(--sc-accent);color:var(--sc-accent-text);font-weight:600;cursor:pointer}
.send:disabled{opacity:.6;cursor:progress}
.secondary{border:1px solid var(--sc-border);border-radius:8px;padding:.5rem .9rem;background:var(--sc-bg);cursor:pointer}
.talk{align-self:flex-start;border:0;background:transparent;color:var(--sc-text);text-decoration:underline;cursor:pointer;font-size:.85rem;padding:.25rem 0;min-height:2rem}
.sr{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){.panel{position:fixed;inset:auto 0 0 0;width:100vw;height:min(100vh,40rem);border-radius:var(--sc-radius) var(--sc-radius) 0 0}.left .panel{left:0}}
@media (prefers-reduced-motion:reduce){.panel,.launcher,.typing::after{animation:none;transition:none}}
`

const hexColor = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/

/** The agent's colour, only as a hex colour (anything else is not CSS this sheet writes). */
export const hostStyles = (color: string | null | undefined): string => {
  if (color == null || !hexColor.test(color)) return ""
  const hex = color.length === 4 ? color.replace(/[0-9a-f]/gi, (d) => d + d) : color
  const channel = (at: number) => {
    const c = parseInt(hex.slice(at, at + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
  // the text on the colour: whichever of black and white contrasts more with it
  const text = (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#000" : "#fff"
  return `:host{--sc-accent:var(--service-chat-accent,${hex});--sc-accent-text:var(--service-chat-accent-text,${text})}`
}

/** A constructable sheet; null where the browser has none (the panel is then unstyled but works). */
export const sheet = (css: string): CSSStyleSheet | null => {
  try {
    const s = new CSSStyleSheet()
    s.replaceSync(css)
    return s
  } catch {
    return null
  }
}
