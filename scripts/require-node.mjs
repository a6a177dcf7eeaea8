// pi 1.x needs Node >= 22.19. `npm start` and `npm test` get there themselves (scripts/with-node24.sh);
// a script run with an older node directly says so in one line and stops, before anything fails less clearly.
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`threadhost needs Node >= 22.19 (pi 1.x); this is ${process.version}. Run it through npm start / npm test, or get Node 24 with: eval "$(bash scripts/node24.sh)"`)
  process.exit(1)
}
