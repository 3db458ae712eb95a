/**
 * `@crustcore/sandbox/descriptors`: what a program's entry point needs to
 * start its children without the descriptor-closing launcher, without
 * loading the rest of the sandbox package (the CLI calls it on every start).
 */
export { closeInheritedDescriptors, inheritableDescriptors } from './runner/inherited-descriptors.js';
