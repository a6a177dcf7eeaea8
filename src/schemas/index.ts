export * from './dialog.js'
export * from './observation.js'
export * from './tool-result.js'
export * from './http.js'
