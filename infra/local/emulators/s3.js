// s3.js starts the S3 emulator of the local stack (s3rver) on 127.0.0.1.
// Usage: node s3.js PORT DATA_DIR [BUCKET...]; each BUCKET is created when
// missing. NODE_PATH must name the node_modules folder that
// infra/local/install.sh fills (.cache/emulators/node_modules).
//
// s3rver knows one hard-wired access key, S3RVER. This script also registers
// the key the local stack uses (AWS_ACCESS_KEY_ID, "local" by default), so the
// Go SDK with the stack's static credentials is accepted. s3rver does not
// verify SigV4 signatures.
"use strict";

const S3rver = require("s3rver");
const { DUMMY_ACCOUNT } = require("s3rver/lib/models/account");

const [portArg, directory, ...buckets] = process.argv.slice(2);
const port = Number(portArg);
if (!Number.isInteger(port) || port <= 0 || !directory) {
  console.error("usage: node s3.js PORT DATA_DIR [BUCKET...]");
  process.exit(2);
}

const key = process.env.AWS_ACCESS_KEY_ID || "local";
DUMMY_ACCOUNT.createKeyPair(key, process.env.AWS_SECRET_ACCESS_KEY || key);

new S3rver({
  address: "127.0.0.1",
  port,
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name, configs: [] })),
})
  .run()
  .then(
    () => console.log(`s3: listening on http://127.0.0.1:${port} (data in ${directory})`),
    (err) => {
      console.error(`s3: ${err && err.message ? err.message : err}`);
      process.exit(1);
    },
  );

for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
