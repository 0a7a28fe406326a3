/** The stack's free-port finder, shared so tests and `npm start` pick ports the same way. */
export { freePort } from "../../scripts/stack/free-port.js";
