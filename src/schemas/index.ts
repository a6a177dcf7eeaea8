export * from './dialog.js'
export * from './observation.js'
export * from './http.js'
