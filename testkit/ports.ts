/** The stack's free-port finder, shared so tests and `npm start` pick ports the same way. */
export { freePort, freePorts } from "../scripts/stack/free-port.js";
