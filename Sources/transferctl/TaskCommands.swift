internal import ArgumentParser

/// `transferctl show TID`.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a task.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The task's id.", valueName: "TID")) var taskID: Int64

    func run() throws {
        let response = try connection.client.send("GET", APIClient.path("v1", "tasks", String(taskID)))
        TaskOutput.print(response, json: connection.json) { TaskText.details($0) }
    }
}

/// `transferctl suspend TID`.
struct SuspendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "suspend", abstract: "Suspend (pause) a task.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The task's id.", valueName: "TID")) var taskID: Int64

    func run() throws {
        let response = try connection.client.send("POST", APIClient.path("v1", "tasks", String(taskID), "suspend"))
        TaskOutput.print(response, json: connection.json) { "task \($0.id): \(TaskText.state($0))" }
    }
}

/// `transferctl resume TID`.
struct ResumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume a suspended task.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The task's id.", valueName: "TID")) var taskID: Int64

    func run() throws {
        let response = try connection.client.send("POST", APIClient.path("v1", "tasks", String(taskID), "resume"))
        TaskOutput.print(response, json: connection.json) { "task \($0.id): \(TaskText.state($0))" }
    }
}

/// `transferctl priority TID P`.
struct PriorityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "priority", abstract: "Change a task's priority.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The task's id.", valueName: "TID")) var taskID: Int64
    @Argument(help: ArgumentHelp("0.0 to 1.0, or low, default, high.", valueName: "PRIORITY")) var priority: PriorityArgument

    func run() throws {
        let response = try connection.client.send("PATCH", APIClient.path("v1", "tasks", String(taskID)),
                                                  json: TaskPriorityBody(priority: priority))
        TaskOutput.print(response, json: connection.json) { "task \($0.id): priority \($0.priority)" }
    }
}

/// `transferctl cancel TID [--resume-data FILE]`.
struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a task; with --resume-data, save the download's resume data to FILE.",
        discussion: "Continue the download later with `transferctl resume-from FILE`. A download whose server gave no validator (ETag or Last-Modified) has no resume data: the task is cancelled and the exit status is 6.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: ArgumentHelp("The task's id.", valueName: "TID")) var taskID: Int64

    @Option(name: .long, help: ArgumentHelp("Where to save the resume data.", valueName: "FILE"))
    var resumeData: String?

    func run() throws {
        let response = try connection.client.send("POST", APIClient.path("v1", "tasks", String(taskID), "cancel"),
                                                  json: TaskCancelBody(produceResumeData: resumeData != nil))
        let task = try response.decode(TaskInfo.self)
        if let resumeData {
            guard let data = task.error?.resumeData else {
                throw CLIFailure(.refused, "task \(taskID) was cancelled without resume data (the server gave no ETag or Last-Modified, or it is not a running download)")
            }
            try TextFile.write(data, to: resumeData)
        }
        TaskOutput.print(response, json: connection.json) { task in
            "task \(task.id): \(TaskText.state(task))" + (resumeData.map { ", resume data saved to \($0)" } ?? "")
        }
    }
}

/// A task answer printed as the daemon's JSON or as text.
enum TaskOutput {
    static func print(_ response: APIResponse, json: Bool, text: (TaskInfo) -> String) {
        if json {
            JSONOutput.print(response.body)
        } else if let task = try? response.decode(TaskInfo.self) {
            StandardStreams.out(text(task) + "\n")
        } else {
            JSONOutput.print(response.body)
        }
    }
}
