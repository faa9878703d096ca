/**
 * Imported first by Tomo's `app.tsx`: in Tomo's single executable (`node --build-sea`, the addon
 * added to the SEA configuration's `assets` as `agent-fs-tools.node`), writes the addon out once
 * and points the loader at it. Outside a SEA it does nothing. It must run before any module that
 * imports `agent-fs-tools` is evaluated, hence a module of its own, imported before them.
 */
import { extractSeaAddon } from 'agent-fs-tools/sea'

extractSeaAddon()
