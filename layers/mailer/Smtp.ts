/**
 * nodemailer's transport, behind a module of ours: the SMTP mailer loads this
 * on demand, and nodemailer (CommonJS) imported statically here keeps its named
 * exports in the bundle, where a dynamic `import("nodemailer")` would only have
 * a default export.
 */
export { createTransport } from "nodemailer"
