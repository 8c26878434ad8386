// sqs.js starts the SQS emulator of the local stack (local-aws-sqs) on
// 127.0.0.1. Usage: node sqs.js PORT. NODE_PATH must name the node_modules
// folder that infra/local/install.sh fills (.cache/emulators/node_modules).
"use strict";

const { createSqsServer } = require("local-aws-sqs");

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error("usage: node sqs.js PORT");
  process.exit(2);
}

createSqsServer({ port, hostname: "127.0.0.1", emulateQueueCreationLifecycle: false }).then(
  () => console.log(`sqs: listening on http://127.0.0.1:${port}`),
  (err) => {
    console.error(`sqs: ${err && err.message ? err.message : err}`);
    process.exit(1);
  },
);

// The queues live in memory: nothing to flush, so stop at once.
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
